"""Per-iteration cost of the loop through the real ``google-genai`` SDK: the Gemini
adapter's SDK path against the bare SDK call.

The same run (N ``add`` calls, then an answer) is played by:

- ``bare sdk``: a hand-written loop (dict contents, ``json.loads`` of nothing: the
  SDK parses) that calls ``client.models.generate_content`` each turn, answered by a
  transport with canned bytes (turn ``i`` calls ``add(i, 1)``): what any loop through
  the SDK pays at least, with no harness and no fake; the baseline;
- ``adapter``: ``harness.run`` with ``GeminiModel`` over the same SDK and canned
  transport: the adapter's own cost (request body, SDK arguments, decoding, the
  memory of each turn's parts, the loop);
- ``adapter stream``: the same, ``stream=True`` (canned server-sent events);
- ``adapter+fake``: ``GeminiModel`` against the harness fake in process
  (``fake_gemini_client`` serving a ``ScriptedModel``: the fake's checks included).

Every timed run is checked (each call answered with the right sum, the final answer).
The cases run interleaved, GC off while timing; each ratio is the median over the
rounds of that round's time against the same round's ``bare sdk``. The target is
``adapter`` within 2x of ``bare sdk`` at N=20 and N=100.

Run: ``python benchmarks/gemini_overhead.py`` (``--quick`` for a smoke run,
``--repeats`` rounds per size).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import httpx2
from google import genai
from google.genai import types

from harness import RunResult, ScriptedModel, call, llm_tool, reply, run
from harness.models import GeminiModel, fake_gemini_client

TARGET = 2.0
"""``adapter`` within this factor of ``bare sdk``."""
MODEL = "gemini-bench"
DECLARATION = {
    "name": "add",
    "description": "Add two integers.",
    "parametersJsonSchema": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}


def _plus(a: int, b: int) -> int:
    return a + b


@llm_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return _plus(a, b)


def _answer(turn: int, n: int) -> dict[str, Any]:
    part: dict[str, Any] = (
        {"text": "done"}
        if turn >= n
        else {"functionCall": {"name": "add", "args": {"a": turn, "b": 1}, "id": f"c{turn}"}}
    )
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1},
        "modelVersion": MODEL,
    }


class Canned(httpx2.BaseTransport):
    """Answers turn ``i`` of a run of ``n`` calls with canned bytes (JSON or SSE)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.turn = 0

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.read()
        data = json.dumps(_answer(self.turn, self.n))
        self.turn += 1
        if b"alt=sse" in request.url.raw_path:
            return httpx2.Response(
                200, headers={"content-type": "text/event-stream"}, content=f"data: {data}\r\n\r\n"
            )
        return httpx2.Response(200, headers={"content-type": "application/json"}, content=data)


def _client(transport: httpx2.BaseTransport) -> genai.Client:
    return genai.Client(
        api_key="bench",
        http_options=types.HttpOptions(
            base_url="http://bench.invalid/", httpx_client=httpx2.Client(transport=transport)
        ),
    )


def bare_sdk(n: int) -> None:
    """The hand-written loop through the SDK (the baseline)."""
    client = _client(Canned(n))
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "add numbers"}]}]
    config = {
        "tools": [{"functionDeclarations": [DECLARATION]}],
        "automaticFunctionCalling": {"disable": True},
    }
    results = []
    while True:
        answer = client.models.generate_content(model=MODEL, contents=contents, config=config)
        parts = answer.candidates[0].content.parts  # type: ignore[index,union-attr]
        call_ = parts[0].function_call  # type: ignore[index]
        if call_ is None:
            break
        value = _plus(**dict(call_.args or {}))
        results.append(value)
        contents.append({"role": "model", "parts": [{"functionCall": call_.model_dump()}]})
        response = {"name": "add", "id": call_.id, "response": {"output": str(value)}}
        contents.append({"role": "user", "parts": [{"functionResponse": response}]})
    if results != [i + 1 for i in range(n)] or answer.text != "done":
        raise RuntimeError("the bare loop did not do the work")


def check(result: RunResult, n: int) -> None:
    """Raise unless every one of the ``n`` calls succeeded with the right sum."""
    calls = result.trace.calls
    failed = [c for c in calls if c.is_error or c.value != int(json.loads(c.arguments)["a"]) + 1]
    if len(calls) != n or failed or result.output != "done":
        raise RuntimeError(
            f"the timed run did not do the work: {len(calls)}/{n} calls, "
            f"{len(failed)} failed, output={result.output!r}"
        )


def _adapter(stream: bool) -> Callable[[int], None]:
    def case(n: int) -> None:
        model = GeminiModel(_client(Canned(n)), MODEL, stream=stream)
        check(run(model, "add numbers", tools=[add], max_iterations=n + 5), n)

    return case


def adapter_fake(n: int) -> None:
    script = ScriptedModel([call("add", {"a": i, "b": 1}) for i in range(n)] + [reply("done")])
    model = GeminiModel(fake_gemini_client(script), MODEL)
    check(run(model, "add numbers", tools=[add], max_iterations=n + 5), n)


CASES: dict[str, Callable[[int], None]] = {
    "bare sdk": bare_sdk,
    "adapter": _adapter(False),
    "adapter stream": _adapter(True),
    "adapter+fake": adapter_fake,
}


def _time(case: Callable[[int], None], n: int) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        case(n)
        return time.perf_counter() - start
    finally:
        gc.enable()


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few rounds")
    parser.add_argument("--repeats", type=int, default=7, help="rounds per size")
    args = parser.parse_args(argv)
    sizes, repeats = ((5, 10), 2) if args.quick else ((20, 100), args.repeats)
    results: dict[str, float] = {}
    print(f"{'N':>5}  {'case':<16}{'us/iteration':>14}  vs bare sdk")
    for n in sizes:
        for case in CASES.values():
            case(n)  # warm up (imports, caches) and check once
        times: dict[str, list[float]] = {name: [] for name in CASES}
        for _ in range(repeats):
            for name, case in CASES.items():
                times[name].append(_time(case, n))
        for name in CASES:
            rounds = zip(times[name], times["bare sdk"], strict=True)
            ratio = statistics.median(t / b for t, b in rounds)
            per = statistics.median(times[name]) / (n + 1) * 1e6
            results[f"N={n} {name} ratio"] = 1.0 if name == "bare sdk" else ratio
            results[f"N={n} {name} us"] = per
            print(f"{n:>5}  {name:<16}{per:>14.1f}  {ratio:.2f}x")
    return results


if __name__ == "__main__":
    main()
