"""Per-iteration cost of the loop through the real ``openai`` SDK + the wire fake.

The same scripted run (N ``add`` calls, then an answer) is played by:

- ``bare+dumps``: a hand-written loop (dict messages, ``json.loads`` of the
  arguments) that also ``json.dumps`` the whole request each turn, as any HTTP
  client must: the baseline every ratio is taken against;
- ``in-process``: ``harness.run`` with a ``ScriptedModel``;
- ``sdk floor``: the ``bare+dumps`` loop that also posts its bytes through the
  real SDK each turn (``client.post`` with pre-encoded content, the response
  parsed into a ``ChatCompletion``) to a transport that answers with canned bytes:
  what any loop through the SDK pays at least, with no harness and no fake;
- ``chat``, ``chat stream``, ``chat async``, ``responses``, ``responses stream``:
  ``OpenAIChatModel`` / ``OpenAIResponsesModel`` over the real SDK, served by
  ``OpenAIWireTransport`` in process (JSON both ways, HTTP objects, SSE parsing).

Every timed run is checked: each call answered with a non-error result holding
the right sum, and the expected final answer. Timing: the cases run interleaved
(each once per round), GC off while timing (as in ``loop_overhead.py``); each
ratio is the median over the rounds of that round's time against the same
round's ``bare+dumps``, so the noise of a shared machine hits both sides alike.
The target is each SDK case within 2x of ``bare+dumps`` at N=100 and N=1000.

Run: ``python benchmarks/sdk_overhead.py`` (``--quick`` for a smoke run;
``--repeats`` rounds per size, ``--cases`` to time a few cases only).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from harness import RunResult, ScriptedModel, Tool, arun, call, llm_tool, reply, run
from harness.formats.openai_chat import tool_param
from harness.models import (
    OpenAIChatModel,
    OpenAIResponsesModel,
    Step,
    fake_async_openai_client,
    fake_openai_client,
)

TARGET = 2.0
"""Each SDK case within this factor of ``bare+dumps``."""


@llm_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


ADD_DEFINITION = tool_param(Tool.from_function(add).definition())
"""The ``add`` tool as Chat Completions sends it (what the hand-written loops send)."""


def _steps(n: int) -> list[Step]:
    return [call("add", {"a": i, "b": 1}) for i in range(n)] + [reply("done")]


def check(result: RunResult, n: int) -> None:
    """Raise unless every one of the ``n`` calls succeeded with the right sum and the run ended."""
    calls = result.trace.calls
    failed = [c for c in calls if c.is_error or c.value != int(json.loads(c.arguments)["a"]) + 1]
    if len(calls) != n or failed or result.output != "done":
        first = failed[0] if failed else None
        raise RuntimeError(
            f"the timed run did not do the work: {len(calls)}/{n} calls, "
            f"{len(failed)} failed (first: {first!r}), output={result.output!r}"
        )


def bare_dumps(n: int) -> None:
    """The hand-written loop that serialises the whole request each turn (baseline)."""

    def add_fn(a: int, b: int) -> int:
        return a + b

    tools: dict[str, Callable[..., Any]] = {"add": add_fn}
    definitions = [ADD_DEFINITION]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "add numbers"}]
    results = []
    for turn in range(n + 1):
        json.dumps({"model": "gpt-bench", "messages": messages, "tools": definitions})
        if turn == n:
            messages.append({"role": "assistant", "content": "done"})
            break
        tool_call = {
            "id": f"call_{turn}",
            "type": "function",
            "function": {"name": "add", "arguments": json.dumps({"a": turn, "b": 1})},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [tool_call]})
        result = tools[tool_call["function"]["name"]](
            **json.loads(tool_call["function"]["arguments"])
        )
        results.append(result)
        messages.append({"role": "tool", "tool_call_id": tool_call["id"], "content": str(result)})
    if results != [i + 1 for i in range(n)] or messages[-1]["content"] != "done":
        raise RuntimeError("the bare loop did not do the work")


_FLOOR_REPLY = json.dumps(
    {
        "id": "chatcmpl-floor",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-bench",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_0",
                            "type": "function",
                            "function": {"name": "add", "arguments": '{"a": 0, "b": 1}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
).encode()


def sdk_floor(n: int) -> None:
    """``bare_dumps`` that also posts each request through the real SDK (canned answers)."""
    import httpx2
    import openai
    from openai.types.chat import ChatCompletion

    def answer(request: httpx2.Request) -> httpx2.Response:
        request.read()
        return httpx2.Response(
            200, headers={"content-type": "application/json"}, content=_FLOOR_REPLY
        )

    client = openai.OpenAI(
        api_key="test",
        base_url="http://harness.test/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(answer)),
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "add numbers"}]
    results = []
    for turn in range(n + 1):
        body = json.dumps({"model": "gpt-bench", "messages": messages, "tools": [ADD_DEFINITION]})
        completion = client.post("/chat/completions", cast_to=ChatCompletion, content=body.encode())
        if completion.choices[0].message.tool_calls[0].function.name != "add":
            raise RuntimeError("the SDK floor did not parse the answer")
        if turn == n:
            messages.append({"role": "assistant", "content": "done"})
            break
        arguments = json.dumps({"a": turn, "b": 1})
        tool_call = {
            "id": f"call_{turn}",
            "type": "function",
            "function": {"name": "add", "arguments": arguments},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [tool_call]})
        results.append(add(**json.loads(arguments)))
        messages.append({"role": "tool", "tool_call_id": tool_call["id"], "content": "x"})
    if results != [i + 1 for i in range(n)]:
        raise RuntimeError("the SDK floor loop did not do the work")


def _sync(factory: Callable[[ScriptedModel], Any]) -> Callable[[int], None]:
    def go(n: int) -> None:
        result = run(
            factory(ScriptedModel(_steps(n))), "add numbers", tools=[add], max_iterations=n + 1
        )
        check(result, n)

    return go


def _async(factory: Callable[[ScriptedModel], Any]) -> Callable[[int], None]:
    def go(n: int) -> None:
        model = factory(ScriptedModel(_steps(n)))
        result = asyncio.run(arun(model, "add numbers", tools=[add], max_iterations=n + 1))
        check(result, n)

    return go


CASES: dict[str, Callable[[int], None]] = {
    "bare+dumps": bare_dumps,
    "in-process": _sync(lambda scripted: scripted),
    "sdk floor": sdk_floor,
    "chat": _sync(lambda s: OpenAIChatModel(fake_openai_client(s), "gpt-bench")),
    "chat stream": _sync(
        lambda s: OpenAIChatModel(fake_openai_client(s), "gpt-bench", stream=True)
    ),
    "chat async": _async(lambda s: OpenAIChatModel(fake_async_openai_client(s), "gpt-bench")),
    "responses": _sync(lambda s: OpenAIResponsesModel(fake_openai_client(s), "gpt-bench")),
    "responses stream": _sync(
        lambda s: OpenAIResponsesModel(fake_openai_client(s), "gpt-bench", stream=True)
    ),
}
SDK_CASES = tuple(case for case in CASES if case not in ("bare+dumps", "in-process", "sdk floor"))


def measure(cases: list[str], n: int, repeats: int) -> dict[str, tuple[float, float]]:
    """Median µs per iteration of each case and its median ratio to ``bare+dumps``.

    Interleaving (every case once per round) spreads the noise of a shared machine
    over all cases alike; each round's ratio is against that round's baseline.
    """
    order = ["bare+dumps", *(case for case in cases if case != "bare+dumps")]
    for case in order:  # warm up: imports and first-use caches are not timed
        CASES[case](2)
    times: dict[str, list[float]] = {case: [] for case in order}
    ratios: dict[str, list[float]] = {case: [] for case in order}
    for _ in range(repeats):
        for case in order:
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                CASES[case](n)
                times[case].append(time.perf_counter() - start)
            finally:
                gc.enable()
        for case in order:
            ratios[case].append(times[case][-1] / times["bare+dumps"][-1])
    return {
        case: (statistics.median(times[case]) / (n + 1) * 1e6, statistics.median(ratios[case]))
        for case in order
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    parser.add_argument(
        "--sizes", type=int, nargs="+", help="iterations per run (default 100 1000)"
    )
    parser.add_argument("--repeats", type=int, help="rounds per size (default 7 at N<=100, else 3)")
    parser.add_argument(
        "--cases", nargs="+", choices=list(CASES), help="cases to time (default all)"
    )
    args = parser.parse_args(argv)
    sizes = args.sizes or ([5, 20] if args.quick else [100, 1000])
    cases = args.cases or list(CASES)
    results: dict[str, Any] = {}
    header = f"{'N':>6}{'case':>18}{'us/iteration':>15}{'vs bare+dumps':>15}"
    print(header)
    print("-" * len(header))
    for n in sizes:
        repeats = args.repeats or (1 if args.quick else (7 if n <= 100 else 3))
        for case, (cost, ratio) in measure(cases, n, repeats).items():
            results[f"N={n} {case}"] = cost
            results[f"N={n} {case} ratio"] = ratio
            mark = "" if case not in SDK_CASES else ("  ok" if ratio <= TARGET else "  >2x")
            print(f"{n:>6}{case:>18}{cost:>15.1f}{ratio:>14.2f}x{mark}")
    return results


if __name__ == "__main__":
    main()
