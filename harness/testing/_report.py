"""Text for test reports: each run's timeline table, failed checks marked; the cost
summary of the runs a test analysed (``harness.cost``); the session's HTML page."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from harness._secrets import scrub_message
from harness.assertions import render_table
from harness.loop import Trace
from harness.scenarios import timeline_rows

__all__ = ["TestRecord", "html_page", "junit_properties", "report_text", "summary_line"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class TestRecord:
    """What one test left for the session's HTML page."""

    __test__ = False

    nodeid: str
    passed: bool
    traces: tuple[Trace, ...]
    costs: tuple[Any, ...]
    """``harness.cost.CostReport`` objects."""


def _cost_lines(costs: Sequence[Any]) -> list[str]:
    return [f"cost: {c.summary()}" for c in costs]


def report_text(traces: list[Trace], failures: list[Any], costs: Sequence[Any] = ()) -> str:
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
    if costs:
        blocks.append("\n".join(_cost_lines(costs)))
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


def summary_line(traces: list[Trace], failures: list[Any], costs: Sequence[Any] = ()) -> str:
    """One line for the terminal summary: the first failed check, or what the runs did
    (with their tokens, cached share and cache breaks when the test analysed their cost)."""
    if failures:
        first = failures[0]
        where = f" at iteration {first.failure.iteration}" if first.failure.iteration else ""
        return f"diverged{where}: {first.description}: {first.problem}"
    iterations = sum(len(t.iterations) for t in traces)
    injected = sum(len(t.injected) for t in traces)
    parts = [
        _count(len(traces), "run"),
        _count(iterations, "iteration"),
        _count(injected, "injected tool"),
    ]
    if costs:
        sent = sum(c.input_tokens for c in costs)
        cached = sum(c.cached_tokens for c in costs)
        breaks = sum(len(c.breaks) for c in costs)
        share = f"{cached / sent:.0%}" if sent else "0%"
        parts.append(f"{sent} input tokens ({share} cached, {_count(breaks, 'cache break')})")
    return ", ".join(parts)


def html_page(records: list[TestRecord]) -> str:
    """The session's page: per test, each cost report's chart and table, and each run's
    timeline (``harness.cost``'s self-contained page)."""
    from harness.assertions._cost import cache_marks
    from harness.cost._html import PageSection, cost_page

    sections = []
    for record in records:
        shown: set[int] = set()
        for number, cost in enumerate(record.costs, 1):
            timeline: list[str] = []
            for trace in cost.traces:
                shown.add(id(trace))
                timeline += render_table(timeline_rows(trace), cache=cache_marks(cost, trace))
            suffix = f" (cost {number})" if len(record.costs) > 1 else ""
            sections.append(
                PageSection(
                    title=record.nodeid + suffix,
                    report=cost,
                    passed=record.passed,
                    timeline=timeline,
                )
            )
        for trace in record.traces:
            if id(trace) not in shown:
                sections.append(
                    PageSection(
                        title=record.nodeid,
                        report=None,
                        passed=record.passed,
                        timeline=render_table(timeline_rows(trace)),
                    )
                )
    return cost_page("harness: test session", sections)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
