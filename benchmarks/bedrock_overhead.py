"""Per-iteration cost of the Bedrock adapter's SDK path against the bare boto3 call.

The same scripted run (N ``add`` calls, then an answer) is played by:

- ``boto3 floor``: a hand-written loop (dict messages, ``json.loads`` of the tool
  input) calling ``client.converse`` each turn, answered by a ``before-send`` handler
  that returns canned bytes: what any loop through boto3 pays at least (parameter
  validation, serialisation, SigV4 signing, the event system, response parsing), with
  no harness and no fake;
- ``in-process``: ``harness.run`` with a ``ScriptedModel``;
- ``converse``, ``converse stream``: ``BedrockConverseModel`` over boto3, served by the
  wire fake in process (``fake_bedrock_client``: the fake reads and checks each request
  like Bedrock and answers JSON or event-stream frames).

Every timed run is checked (each call answered with the right sum, the final answer).
The cases run interleaved, once per round, GC off while timing; each ratio is the median
over the rounds of that round's time against the same round's ``boto3 floor``.

Run: ``python benchmarks/bedrock_overhead.py`` (``--quick`` for a smoke run,
``--repeats`` rounds per size). Nothing leaves the process: dummy credentials, a set
region, an endpoint under ``.invalid``.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from harness import RunResult, ScriptedModel, Tool, call, llm_tool, reply, run
from harness.formats import bedrock_converse
from harness.models import BedrockConverseModel, Step, fake_bedrock_client
from harness.models._wire._bedrock_client import FAKE_BEDROCK_ENDPOINT, FAKE_BEDROCK_REGION

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


@llm_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


ADD_SPEC = bedrock_converse.tool_param(Tool.from_function(add).definition())


def _steps(n: int) -> list[Step]:
    return [call("add", {"a": i, "b": 1}) for i in range(n)] + [reply("done")]


def check(result: RunResult, n: int) -> None:
    """Raise unless every one of the ``n`` calls succeeded with the right sum and the run ended."""
    calls = result.trace.calls
    failed = [c for c in calls if c.is_error or c.value != int(json.loads(c.arguments)["a"]) + 1]
    if len(calls) != n or failed or result.output != "done":
        raise RuntimeError(
            f"the timed run did not do the work: {len(calls)}/{n} calls, {len(failed)} failed, "
            f"output={result.output!r}"
        )


class _Canned:
    """A ``before-send`` handler answering each call with the next canned Converse body."""

    def __init__(self, n: int) -> None:
        self.bodies = [
            json.dumps(
                {
                    "output": {"message": {"role": "assistant", "content": [content]}},
                    "stopReason": "tool_use" if "toolUse" in content else "end_turn",
                    "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                }
            ).encode()
            for content in [
                *(
                    {"toolUse": {"toolUseId": f"t{i}", "name": "add", "input": {"a": i, "b": 1}}}
                    for i in range(n)
                ),
                {"text": "done"},
            ]
        ]
        self.position = 0

    def __call__(self, request: Any, **_: Any) -> Any:
        from botocore.awsrequest import AWSResponse

        body = self.bodies[self.position]
        self.position += 1
        raw = type("Raw", (), {"stream": lambda self, **k: iter([body])})()
        return AWSResponse(request.url, 200, {"content-type": "application/json"}, raw)


def boto3_floor(n: int) -> None:
    """The hand-written loop through boto3 (baseline)."""
    import boto3

    client = boto3.client(  # the fake client's settings, answered with canned bytes
        "bedrock-runtime",
        region_name=FAKE_BEDROCK_REGION,
        endpoint_url=FAKE_BEDROCK_ENDPOINT,
        aws_access_key_id="harness-fake-key",
        aws_secret_access_key="harness-fake-secret",
    )
    client.meta.events.register("before-send.bedrock-runtime", _Canned(n))
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "go"}]}]
    done = 0
    while True:
        answer = client.converse(modelId=MODEL, messages=messages, toolConfig={"tools": [ADD_SPEC]})
        message = answer["output"]["message"]
        messages.append(message)
        uses = [b["toolUse"] for b in message["content"] if "toolUse" in b]
        if not uses:
            break
        results = []
        for use in uses:
            value = add(**use["input"])
            if value != use["input"]["a"] + 1:
                raise RuntimeError("wrong sum")
            results.append(
                {"toolResult": {"toolUseId": use["toolUseId"], "content": [{"text": str(value)}]}}
            )
            done += 1
        messages.append({"role": "user", "content": results})
    if done != n:
        raise RuntimeError(f"the floor loop made {done}/{n} calls")


def _adapter(stream: bool) -> Callable[[int], None]:
    def case(n: int) -> None:
        model = BedrockConverseModel(
            fake_bedrock_client(ScriptedModel(_steps(n))), MODEL, stream=stream
        )
        check(run(model, "go", tools=[add], options=_options(n)), n)

    return case


def _in_process(n: int) -> None:
    check(run(ScriptedModel(_steps(n)), "go", tools=[add], options=_options(n)), n)


def _options(n: int) -> Any:
    from harness.loop import LoopOptions

    return LoopOptions(max_iterations=n + 2)


CASES: dict[str, Callable[[int], None]] = {
    "boto3 floor": boto3_floor,
    "in-process": _in_process,
    "converse": _adapter(False),
    "converse stream": _adapter(True),
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
    parser.add_argument("--quick", action="store_true", help="a smoke run (small N, 1 round)")
    parser.add_argument("--repeats", type=int, default=5, help="rounds per size")
    args = parser.parse_args(argv)
    sizes, repeats = ((5, 20), 1) if args.quick else ((100, 300), args.repeats)
    results: dict[str, float] = {}
    print(f"{'N':>5} {'case':<16} {'us/iteration':>13} {'vs boto3 floor':>15}")
    for n in sizes:
        times: dict[str, list[float]] = {name: [] for name in CASES}
        for _ in range(repeats):
            for name, case in CASES.items():
                times[name].append(_time(case, n))
        floor = times["boto3 floor"]
        for name in CASES:
            per = statistics.median(times[name]) / (n + 1) * 1e6
            ratio = statistics.median(t / f for t, f in zip(times[name], floor, strict=True))
            results[f"N={n} {name} us"] = per
            results[f"N={n} {name} ratio"] = ratio
            print(f"{n:>5} {name:<16} {per:>13.0f} {ratio:>14.2f}x")
    return results


if __name__ == "__main__":
    main()
