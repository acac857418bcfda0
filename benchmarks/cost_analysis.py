"""Analysing a long run's requests with the cache model (target: 1,000 requests < 0.5 s).

One run of 1,000 requests through the real loop (a scripted model calling a tool each
turn, 20 tools offered, a tool added after every 100th call: the cache breaks nine times),
recorded with ``record_requests``; then the time of ``harness.cost.analyse`` alone, per
wire format, with the estimate tokenizer. The history grows to about 2,000 messages,
so a model that re-read every request whole would touch two million messages; this one
encodes each message once and compares prefixes in C.

Run: ``python benchmarks/cost_analysis.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import time

from harness import ScriptedModel, Tool, ToolsetChange, call, reply, run
from harness.cost import CostReport, EstimateTokenizer, analyse, record_requests
from harness.loop import InjectionContext, InjectionStrategy

FORMATS = ("openai-chat", "openai-responses", "anthropic-messages")


def _tool(index: int) -> Tool:
    return Tool.from_schema(
        f"tool_{index:03d}",
        f"Tool number {index}: looks a record up by its id and returns its fields.",
        {"type": "object", "properties": {"id": {"type": "string", "description": "The id."}}},
        lambda arguments: {"id": arguments.get("id"), "ok": True},
    )


class EveryHundred(InjectionStrategy):
    """Adds a tool after every 100th call (a tools change: a cache break)."""

    name = "every-hundred"

    def __init__(self) -> None:
        self.added = 0

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        if context.iteration % 100:
            return None
        self.added += 1
        return ToolsetChange(add=(_tool(900 + self.added),), reason="the hundredth call")


def record(requests: int) -> object:
    """The log of one run of ``requests`` requests."""
    steps = [call("tool_000", {"id": f"r{i}"}) for i in range(requests - 1)] + [reply("done")]
    with record_requests() as log:
        run(
            ScriptedModel(steps),
            "Look the records up one by one.",
            tools=[_tool(i) for i in range(20)],
            strategies=[EveryHundred()],
            max_iterations=requests + 1,
        )
    return log


def measure(log: object, format_name: str) -> tuple[float, CostReport]:
    started = time.perf_counter()
    report = analyse(log, format=format_name, tokenizer=EstimateTokenizer())
    return time.perf_counter() - started, report


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a 100-request run")
    args = parser.parse_args(argv)
    requests = 100 if args.quick else 1_000
    log = record(requests)
    results: dict[str, float] = {}
    print(f"{'format':<22}{'requests':>9}{'seconds':>9}{'breaks':>8}{'input tokens':>14}")
    for format_name in FORMATS:
        best = min(measure(log, format_name)[0] for _ in range(3))
        _, report = measure(log, format_name)
        results[f"{format_name} seconds"] = best
        results[f"{format_name} breaks"] = len(report.breaks)
        print(
            f"{format_name:<22}{len(report.requests):>9}{best:>9.3f}"
            f"{len(report.breaks):>8}{report.input_tokens:>14}"
        )
    return results


if __name__ == "__main__":
    main()
