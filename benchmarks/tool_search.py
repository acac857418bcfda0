"""What deferring a 500-tool catalog behind a local BM25 tool search costs per request.

Two runs of the harness loop with the same script (one search, then N calls of a plain
tool, then an answer): one offers the plain tool alone, the other adds ``ToolSearch`` over
500 generated tools (deferred, with the local BM25 ``tool_search`` the loop answers). The
difference per request is what the deferred catalog adds: building the requests with
500 more definitions, the tool states the trace records, the scripted model reading them.
Target: under 1 ms per request. CPU time (``time.process_time``), median of the repeats,
garbage collection off while timing.

Run: ``python benchmarks/tool_search.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

from harness.injection import ToolSearch
from harness.loop import run
from harness.models import ScriptedModel
from harness.models._scripted._steps import call, reply, search
from harness.tools import Tool, llm_tool

TARGET_MS = 1.0


@llm_tool
def get_time() -> str:
    """Current time."""
    return "noon"


def catalog(size: int) -> list[Tool]:
    """``size`` tools with distinct names and descriptions."""
    return [
        Tool.from_schema(
            f"tool_{i}_lookup_{['orders', 'weather', 'invoices', 'tickets'][i % 4]}",
            f"Look up {['orders', 'weather', 'invoices', 'tickets'][i % 4]} of region {i}.",
            {"type": "object", "properties": {}},
            lambda arguments: "ok",
        )
        for i in range(size)
    ]


def _script(calls: int, searched: bool) -> ScriptedModel:
    steps = [search("weather region 7")] if searched else [call("get_time")]
    steps += [call("get_time") for _ in range(calls)] + [reply("done")]
    return ScriptedModel(steps)


def _timed(calls: int, tools: list[Tool] | None) -> float:
    strategies = [ToolSearch(tools)] if tools else []
    model = _script(calls, searched=bool(tools))
    gc.disable()
    start = time.process_time()
    result = run(model, "go", tools=[get_time], strategies=strategies, max_iterations=calls + 5)
    elapsed = time.process_time() - start
    gc.enable()
    assert result.output == "done"
    if tools:
        first = result.trace.iterations[0]
        assert first.searches == 1 and first.discovered and len(first.deferred) == len(tools)
    return elapsed / len(result.trace)


def main(argv: list[str] | None = None) -> float:
    """Print the figures; return the milliseconds added per request."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    calls, repeats = (50, 3) if args.quick else (300, 7)
    tools = catalog(500)
    plain, deferred = [], []
    for _ in range(repeats):  # interleaved
        plain.append(_timed(calls, None))
        deferred.append(_timed(calls, tools))
    base, cost = statistics.median(plain), statistics.median(deferred)
    added_ms = (cost - base) * 1000
    print(f"plain loop: {base * 1e6:.1f} us/request")
    print(f"500 deferred tools + local BM25 search: {cost * 1e6:.1f} us/request")
    print(f"added: {added_ms:.3f} ms/request (target < {TARGET_MS} ms)")
    if added_ms >= TARGET_MS and not args.quick:
        raise SystemExit(f"over target: {added_ms:.3f} ms >= {TARGET_MS} ms")
    return added_ms


if __name__ == "__main__":
    main()
