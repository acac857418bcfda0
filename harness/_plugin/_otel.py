"""``--harness-otel FILE``: every run the tests made, as OpenTelemetry spans in one file.

Registered by the plugin in ``pytest_configure`` when the option is set. Each test's runs
(every run made while it ran, ``harness.loop.capture_run``, and the traces it checked,
such as wire traces) are exported when the test ends, one OpenTelemetry trace per run
with the test's node id and outcome as attributes (``harness.test``,
``harness.test.outcome``) and the cache breaks of the cost reports it judged. The file is
written at the end of the session as OTLP JSON, one line per process: the controller
empties it first, pytest-xdist workers append under a file lock.

Loaded at pytest start-up only when asked for; it imports the harness when a test runs.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from harness import _check_sink as _sink

__all__ = ["OTEL_PLUGIN", "OtelExport"]

OTEL_PLUGIN = "harness-otel"
"""The exporter's name in the plugin manager."""


class OtelExport:
    """Collects each test's runs and writes them as OTLP JSON at the end of the session."""

    def __init__(self, config: pytest.Config, path: str) -> None:
        self.path = Path(config.invocation_params.dir, path)
        self.items: list[tuple[Any, Any]] = []
        """``(trace, ExportOptions)`` of every run, in the order the tests ended."""
        self.worker = hasattr(config, "workerinput")
        if not self.worker:  # the controller (or a run without xdist) starts the file afresh
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("", encoding="utf-8")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        from harness.loop import capture_run

        with capture_run() as captured:
            try:
                return (yield)
            finally:
                item.stash[_RUNS] = [r.trace for r in captured.runs]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if call.when == "call":
            sink = _sink.current()
            checked = list(sink.traces) if sink is not None else []
            costs = list(sink.costs) if sink is not None else []
            self._keep(item.nodeid, report.outcome, [*item.stash.get(_RUNS, []), *checked], costs)
        return report

    def _keep(self, nodeid: str, outcome: str, traces: list[Any], costs: list[Any]) -> None:
        from harness.traces._export import ExportOptions

        seen: list[Any] = []
        for trace in traces:
            if any(trace is s for s in seen):
                continue
            seen.append(trace)
            cost = next((c for c in costs if any(t is trace for t in c.traces)), None)
            attributes = {"harness.test": nodeid, "harness.test.outcome": outcome}
            options = ExportOptions(name=nodeid, attributes=attributes, cost=cost)
            self.items.append((trace, options))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.items:
            return
        from filelock import FileLock

        from harness.traces._api import encode_runs, write_document

        document = encode_runs(self.items)
        with FileLock(str(self.path) + ".lock"):
            write_document(document, self.path, append=True)
        with contextlib.suppress(OSError):
            Path(str(self.path) + ".lock").unlink()


_RUNS = pytest.StashKey[list[Any]]()
"""The runs a test made (its ``capture_run``)."""
