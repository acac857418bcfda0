"""Per-iteration cost of the loop through the real ``openai`` SDK + fake transport vs in-process.

The same scripted run (N tool-calling iterations, then an answer) is played by a
``ScriptedModel`` called in-process, and by the same script served through
``OpenAIWireTransport`` to ``OpenAIChatModel`` / ``OpenAIResponsesModel`` over the
real SDK (JSON encoding, HTTP request objects, validation, SSE parsing). Each
request carries the whole history, so the SDK path grows with N.

Run: ``python benchmarks/sdk_overhead.py`` (``--quick`` for a smoke run; at N=1000
only the Chat Completions case runs unless ``--all`` is given).
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

from harness import ScriptedModel, call, llm_tool, reply, run
from harness.loop import Model
from harness.models import OpenAIChatModel, OpenAIResponsesModel, Step, fake_openai_client


@llm_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _steps(n: int) -> list[Step]:
    return [call("add", {"a": i, "b": 1}) for i in range(n)] + [reply("done")]


CASES: dict[str, Callable[[ScriptedModel], Model]] = {
    "in-process": lambda scripted: scripted,
    "chat": lambda scripted: OpenAIChatModel(fake_openai_client(scripted), "gpt-bench"),
    "chat stream": lambda scripted: OpenAIChatModel(
        fake_openai_client(scripted), "gpt-bench", stream=True
    ),
    "responses": lambda scripted: OpenAIResponsesModel(fake_openai_client(scripted), "gpt-bench"),
}


def timed_run(case: str, n: int) -> float:
    """Seconds for one run of ``n`` iterations through ``case``."""
    model = CASES[case](ScriptedModel(_steps(n)))
    gc.collect()
    start = time.perf_counter()
    result = run(model, "add numbers", tools=[add], max_iterations=n + 1)
    elapsed = time.perf_counter() - start
    if result.output != "done":  # pragma: no cover - the benchmark would be meaningless
        raise RuntimeError(f"{case}: unexpected output {result.output!r}")
    return elapsed


def measure(case: str, n: int, repeats: int) -> float:
    """Best-of-``repeats`` microseconds per iteration."""
    return min(timed_run(case, n) for _ in range(repeats)) / (n + 1) * 1e6


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    parser.add_argument(
        "--all", action="store_true", help="every case at N=1000 too (slow: minutes per case)"
    )
    args = parser.parse_args(argv)
    sizes = [5, 20] if args.quick else [100, 1000]
    results: dict[str, Any] = {}
    header = f"{'N':>6}{'case':>14}{'us/iteration':>15}{'ratio':>9}"
    print(header)
    print("-" * len(header))
    for n in sizes:
        repeats = 1 if args.quick or n >= 1000 else 3
        base = measure("in-process", n, repeats)
        results[f"N={n} in-process"] = base
        print(f"{n:>6}{'in-process':>14}{base:>15.1f}{1.0:>8.1f}x")
        cases = ("chat", "chat stream", "responses") if n < 1000 or args.all else ("chat",)
        for case in cases:
            cost = measure(case, n, repeats)
            results[f"N={n} {case}"] = cost
            results[f"N={n} {case} ratio"] = cost / base
            print(f"{n:>6}{case:>14}{cost:>15.1f}{cost / base:>8.1f}x")
    return results


if __name__ == "__main__":
    main()
