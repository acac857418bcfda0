"""Fuzzing throughput: generated scenarios per second (generation + run + invariant checks).

Runs campaigns of the mixed universe (up to 50 tools, 20 iterations, every fault)
with no strategy beyond the universe's own, on one process and with ``--workers 2``,
and prints scenarios per second in total and per worker. Target: at least 200/s
on one core.

Run: ``python benchmarks/fuzz_throughput.py`` (``--quick`` for a smoke run,
``--examples N`` to change the campaign size).
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from typing import Any

from harness.fuzz import CampaignConfig, CampaignReport, run_campaign


def campaign(examples: int, workers: int, output: str, kind: str = "mixed") -> CampaignReport:
    """One benchmark campaign (no example database, fixed seed)."""
    config = CampaignConfig(
        kind=kind,
        examples=examples,
        seed=1,
        profile="dev",
        max_tools=50,
        max_turns=20,
        max_iterations=20,
        database=None,
        output=output,
        workers=workers,
    )
    return run_campaign(config)


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (wall time lies on a busy machine)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark; return the measured numbers (for the smoke test)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a few examples, for smoke tests")
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--kind", default="mixed")
    args = parser.parse_args(argv)
    examples = 20 if args.quick else args.examples
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as output:
        plans = [(1,)] if args.quick else [(1,), (2,)]
        for (workers,) in plans:
            cpu = _cpu_seconds()
            report = campaign(examples, workers, output, args.kind)
            cpu = _cpu_seconds() - cpu
            key = f"workers={workers}"
            results[key] = report
            results[f"{key} cpu/s"] = report.examples / cpu if cpu else 0.0
            print(
                f"{key:10} kind={args.kind} examples={report.examples} "
                f"timelines={len(report.timelines)} injections/run={report.injections_per_run:.2f} "
                f"violations={sum(report.violations.values())} "
                f"total={report.per_second:.0f}/s per-worker={report.per_worker_second:.0f}/s "
                f"per-cpu-second={results[key + ' cpu/s']:.0f}/s ({report.elapsed:.1f}s)"
            )
    return results


if __name__ == "__main__":
    main()
