"""Unknown tool calls among many offered tools: time and size of the error results.

Each unknown call is answered with the count of offered tools and at most a few
close names, so the history grows with the number of calls, not calls x tools
(the old message listed every tool: 1,000 calls x 10,000 tools made 181 MiB).

Run: ``python benchmarks/unknown_tools.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import time

from harness import ScriptedModel, Tool, Toolset, call, calls, llm_tool, reply, run


@llm_tool
def lookup(key: str) -> str:
    """Look a key up."""
    return key


def measure(unknown: int, offered: int) -> tuple[float, int]:
    """Seconds for one run with ``unknown`` unknown calls, and bytes of tool messages."""
    base = Tool.from_function(lookup)
    toolset = Toolset(base.with_name(f"tool_{i:05d}_lookup") for i in range(offered))
    steps = [calls(*(call(f"tool_{i:05d}_lokup") for i in range(unknown))), reply("done")]
    model = ScriptedModel(steps, lenient=True)
    started = time.perf_counter()
    result = run(model, "go", tools=toolset)
    elapsed = time.perf_counter() - started
    size = sum(len((m.content or "").encode()) for m in result.messages if m.role == "tool")
    return elapsed, size


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes")
    args = parser.parse_args(argv)
    cases = [(20, 1_000)] if args.quick else [(100, 10_000), (1_000, 10_000)]
    results: dict[str, float] = {}
    print(f"{'case':<32}{'seconds':>10}{'tool msg bytes':>16}{'bytes/call':>12}")
    for unknown, offered in cases:
        seconds, size = measure(unknown, offered)
        label = f"unknown={unknown} tools={offered}"
        results[f"{label} seconds"] = seconds
        results[f"{label} bytes_per_call"] = size / unknown
        print(f"{label:<32}{seconds:>10.2f}{size:>16}{size / unknown:>12.0f}")
    return results


if __name__ == "__main__":
    main()
