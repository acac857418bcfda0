"""Fuzzing throughput: generated scenarios per second (generation + run + invariant checks).

Runs campaigns of the mixed universe (up to 50 tools, 20 iterations, every fault)
with no strategy beyond the universe's own, on one process and with ``--workers 2``,
and prints scenarios per second in total and per worker. Target: at least 200/s
on one core.

Run: ``python benchmarks/fuzz_throughput.py`` (``--quick`` for a smoke run,
``--examples N`` to change the campaign size, ``--workers N`` for one worker count
only). Each line gives the total rate (scenarios per wall-clock second, process start
included), the rate per worker (per second busy) with each worker process's own, the
rate per CPU second, and the sizes of the universes the campaign really generated.
"""

from __future__ import annotations

import argparse
import resource
import statistics
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


def size_summary(report: CampaignReport) -> str:
    """The universe sizes a campaign generated: mean, median, max and a histogram."""
    sizes = sorted(report.sizes.elements())
    if not sizes:
        return "sizes: none"
    buckets: dict[str, int] = {}
    for size in sizes:
        low = min(size // 10 * 10, 50)
        label = f"{low}-{low + 9}" if low < 50 else "50+"
        buckets[label] = buckets.get(label, 0) + 1
    histogram = " ".join(f"{k}:{100 * v / len(sizes):.0f}%" for k, v in buckets.items())
    return (
        f"tools/universe mean={statistics.mean(sizes):.1f} median={statistics.median(sizes):g} "
        f"max={sizes[-1]} [{histogram}]"
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark; return the measured numbers (for the smoke test)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a few examples, for smoke tests")
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--kind", default="mixed")
    parser.add_argument(
        "--workers",
        type=int,
        action="append",
        help="worker processes (repeatable; default: 1, then 2)",
    )
    args = parser.parse_args(argv)
    examples = 20 if args.quick else args.examples
    plans = args.workers or ([1] if args.quick else [1, 2])
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as output:
        for workers in plans:
            cpu = _cpu_seconds()
            report = campaign(examples, workers, output, args.kind)
            cpu = _cpu_seconds() - cpu
            key = f"workers={workers}"
            results[key] = report
            results[f"{key} cpu/s"] = report.examples / cpu if cpu else 0.0
            each = " ".join(f"{rate:.0f}/s" for rate in sorted(report.worker_rates().values()))
            print(
                f"{key:10} kind={args.kind} examples={report.examples} "
                f"timelines={len(report.timelines)} injections/run={report.injections_per_run:.2f} "
                f"violations={sum(report.violations.values())} "
                f"total={report.per_second:.0f}/s per-worker={report.per_worker_second:.0f}/s "
                f"(each: {each}) per-cpu-second={results[key + ' cpu/s']:.0f}/s "
                f"({report.elapsed:.1f}s)"
            )
            print(f"{'':10} {size_summary(report)}")
    return results


if __name__ == "__main__":
    main()
