"""Where the current test's traces and failed checks are collected (stdlib only).

The pytest plugin opens a sink per test; ``harness.assertions`` and the plugin's
runner report into it; outside pytest (no open sink) reporting is a no-op.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = [
    "TestSink",
    "current",
    "open_sink",
    "record_cost",
    "record_failure",
    "record_trace",
    "restore",
]


@dataclasses.dataclass(kw_only=True)
class TestSink:
    """What one test produced: traces it ran or checked, and checks that failed."""

    __test__ = False

    nodeid: str
    traces: list[Any] = dataclasses.field(default_factory=list)
    """``harness.loop.Trace`` objects, each recorded once, in order."""
    failures: list[Any] = dataclasses.field(default_factory=list)
    """Failed ``harness.assertions.Verdict`` objects, in order."""
    costs: list[Any] = dataclasses.field(default_factory=list)
    """``harness.cost.CostReport`` objects the test judged, each once, in order."""

    def add_trace(self, trace: Any) -> None:
        """Record ``trace`` unless it is already recorded (by identity)."""
        if trace is not None and all(t is not trace for t in self.traces):
            self.traces.append(trace)


_current: TestSink | None = None


def open_sink(nodeid: str | None) -> TestSink | None:
    """Start collecting for ``nodeid`` (``None`` closes the sink); returns the new sink."""
    global _current
    _current = TestSink(nodeid=nodeid) if nodeid is not None else None
    return _current


def restore(sink: TestSink | None) -> None:
    """Make ``sink`` the open one again (pytest sessions can nest, e.g. under pytester)."""
    global _current
    _current = sink


def current() -> TestSink | None:
    """The open sink, if a test is running under the plugin."""
    return _current


def record_trace(trace: Any) -> None:
    """Record a trace for the running test's report (no-op outside the plugin)."""
    if _current is not None:
        _current.add_trace(trace)


def record_cost(report: Any) -> None:
    """Record a cost report (and its runs' traces) for the running test's report (no-op
    outside the plugin)."""
    if _current is not None:
        if all(r is not report for r in _current.costs):
            _current.costs.append(report)
        for trace in getattr(report, "traces", ()):
            _current.add_trace(trace)


def record_failure(verdict: Any, trace: Any = None) -> None:
    """Record a failed check (and the trace it judged) for the running test's report."""
    if _current is not None:
        _current.failures.append(verdict)
        _current.add_trace(trace)
