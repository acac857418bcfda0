"""Text for test reports: each run's timeline table, failed checks marked."""

from __future__ import annotations

from typing import Any

from harness._secrets import scrub_message
from harness.assertions import render_table
from harness.loop import Trace
from harness.scenarios import timeline_rows

__all__ = ["junit_properties", "report_text", "summary_line"]


def report_text(traces: list[Trace], failures: list[Any]) -> str:
    """One block per run: a header, the table (first failed check's divergence marked),
    then the failed checks on that run."""
    blocks = []
    for number, trace in enumerate(traces, 1):
        mine = [v for v in failures if v.trace is trace]
        failure = mine[0].failure if mine else None
        header = (
            f"run {number}: {len(trace.iterations)} iterations, "
            f"{len(trace.injected)} injected, {trace.restarts} restarts"
        )
        table = render_table(
            timeline_rows(trace),
            mark=failure.iteration if failure else None,
            expected=failure.expected if failure else None,
        )
        lines = [header, *table]
        lines.extend(f"  failed: {v.description}: {v.problem}" for v in mine)
        blocks.append("\n".join(lines))
    return scrub_message("\n\n".join(blocks))


def junit_properties(traces: list[Trace]) -> list[tuple[str, object]]:
    """Per-test JUnit XML properties: runs, iterations, injected tools, restarts."""
    injected = [n for t in traces for n in t.injected]
    return [
        ("harness_runs", len(traces)),
        ("harness_iterations", sum(len(t.iterations) for t in traces)),
        ("harness_injected_tools", len(injected)),
        ("harness_injected", scrub_message(",".join(injected))),
        ("harness_restarts", sum(t.restarts for t in traces)),
    ]


def summary_line(traces: list[Trace], failures: list[Any]) -> str:
    """One line for the terminal summary: the first failed check, or what the runs did."""
    if failures:
        first = failures[0]
        where = f" at iteration {first.failure.iteration}" if first.failure.iteration else ""
        return f"diverged{where}: {first.description}: {first.problem}"
    iterations = sum(len(t.iterations) for t in traces)
    injected = sum(len(t.injected) for t in traces)
    return ", ".join(
        [
            _count(len(traces), "run"),
            _count(iterations, "iteration"),
            _count(injected, "injected tool"),
        ]
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
