"""The plugin's reporting: what each test ran, shown where pytest shows results.

One ``HarnessReporter`` per session, registered by ``harness.pytest_plugin`` in
``pytest_configure`` (as pytest registers its terminal reporter). It opens a sink per test
(``harness._check_sink``) that runs and checks report into, and turns what the sink
holds into the test report (timeline section, summary line, JUnit properties), the
terminal summary, the ``--harness-html`` page and the injection coverage
(``--harness-coverage``); it also renders a failed ``assert trace == expectation``.

Loaded at pytest start-up, so at load time it imports only the standard library, pytest,
``harness._plugin`` and the exception tree (which every test run imports anyway); the
report text (which needs the loop) is imported when a test has something to report.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import _check_sink as _sink
from harness._errors import NetworkRefused
from harness.testing import _options as opts

__all__ = ["REPORTER_NAME", "HarnessReporter"]

REPORTER_NAME = "harness-reporter"
"""The reporter's name in the plugin manager (``config.pluginmanager.get_plugin``)."""


class HarnessReporter:
    """Collects what each test ran and checked, and reports it (one per session)."""

    def __init__(self, config: pytest.Config) -> None:
        self._timeline = opts.cli_or_ini(config, opts.TIMELINE) or "on-failure"
        self._html: str | None = opts.cli_or_ini(config, opts.HTML)
        self._page: list[Any] = []
        """``harness.testing._report.TestRecord`` per test, in order, for the HTML page."""
        self._open = contextlib.ExitStack()
        self._coverage: Any = None
        """The session-wide ``capture_run`` capture: every run any test makes."""
        if opts.cli_or_ini(config, opts.COVERAGE):
            from harness.loop import capture_run

            self._coverage = self._open.enter_context(capture_run())

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self._open.close()

    # -- per test ----------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        outer = _sink.current()
        _sink.open_sink(item.nodeid)
        try:
            return (yield)
        finally:
            _sink.restore(outer)  # pytest sessions nest (pytester)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        """The test's runs in its report: JUnit properties, the timeline section (per
        ``--harness-timeline``) and the summary line, the record for the HTML page."""
        sink = _sink.current()
        if sink is None or call.when != "call":
            return (yield)
        if sink.traces:
            from harness.testing._report import junit_properties

            item.user_properties.extend(junit_properties(sink.traces))
        report = yield
        if not (sink.traces or sink.failures or sink.costs):
            return report
        self._keep_for_page(report, sink)
        if self._timeline == "never" or (self._timeline == "on-failure" and not report.failed):
            return report
        from harness.testing._report import report_text, summary_line

        # The assertion message already shows a failed harness check's table: print it once.
        shown_by_assertion = (
            report.failed
            and bool(sink.failures)
            and call.excinfo is not None
            and call.excinfo.errisinstance(AssertionError)
        )
        if not shown_by_assertion and all(
            name != opts.TIMELINE_SECTION for name, _ in report.sections
        ):
            report.sections.append(
                (opts.TIMELINE_SECTION, report_text(sink.traces, sink.failures, sink.costs))
            )
        report.harness_summary = summary_line(sink.traces, sink.failures, sink.costs)
        return report

    def _keep_for_page(self, report: pytest.TestReport, sink: _sink.TestSink) -> None:
        if self._html is None:
            return
        from harness.testing._report import TestRecord

        self._page.append(
            TestRecord(
                nodeid=report.nodeid,
                passed=report.passed,
                traces=tuple(sink.traces),
                costs=tuple(sink.costs),
            )
        )

    @pytest.hookimpl(wrapper=True, specname="pytest_runtest_makereport")
    def pytest_runtest_makereport_refusal(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Any:
        """A refusal wrapped by an SDK (``openai.APIConnectionError: Connection error.``) is
        named in the failure and its summary line, not only deep in the chained causes."""
        report = yield
        error = call.excinfo.value if call.excinfo is not None else None
        if not report.failed or error is None:
            return report
        from harness.testing._network import refusal_in

        refused = refusal_in(error)
        if refused is None or isinstance(error, NetworkRefused):
            return report
        longrepr = report.longrepr
        if hasattr(longrepr, "addsection"):
            longrepr.addsection("harness: the network guard refused this request", str(refused))
        crash = getattr(longrepr, "reprcrash", None)
        if crash is not None:
            crash.message = f"NetworkRefused: {refused} (surfaced as {crash.message})"
        return report

    # -- end of session ----------------------------------------------------------------

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The injection coverage, one line per test that ran the harness, and the
        timeline snapshots written."""
        self._write_coverage(terminalreporter)
        reports = [
            r for key in ("failed", "error", "passed") for r in terminalreporter.stats.get(key, [])
        ]
        entries = [
            (r.nodeid, r.harness_summary) for r in reports if getattr(r, "harness_summary", None)
        ]
        if entries:  # one line per test: where its run first diverged (or what it did)
            terminalreporter.write_sep("=", "harness timelines")
            for nodeid, line in entries:
                terminalreporter.write_line(f"{nodeid}: {line}")
        written = [
            str(value)
            for r in terminalreporter.stats.get("", []) + reports
            for key, value in getattr(r, "user_properties", ())
            if key == opts.SNAPSHOT_PROPERTY and getattr(r, "when", "") == "teardown"
        ]
        if written:
            terminalreporter.write_sep("-", f"harness: {len(written)} timeline snapshot(s) written")
            for path in written:
                terminalreporter.write_line(path)

    def _write_coverage(self, terminalreporter: Any) -> None:
        """The injection coverage of the session's runs (``--harness-coverage``)."""
        if self._coverage is None:
            return
        from harness.scenarios import InjectionCoverage

        coverage = InjectionCoverage()
        for captured in self._coverage.all_runs:
            coverage.declare(captured.tools, captured.strategies)
            coverage.add_run(captured.trace)
        terminalreporter.write_sep("=", "harness injection coverage")
        for line in coverage.format().splitlines():
            terminalreporter.write_line(line)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Apply inline snapshot updates; write the ``--harness-html`` page (on the
        controller only under xdist)."""
        snapshots = sys.modules.get("harness.testing._snapshot")
        if snapshots is not None:  # a test took a snapshot: updates may be pending
            snapshots.apply_inline_updates()
        if self._html is not None and not hasattr(session.config, "workerinput"):
            from harness.testing._report import html_page

            page = Path(session.config.invocation_params.dir, self._html)
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(html_page(self._page), encoding="utf-8")

    # -- assertions --------------------------------------------------------------------

    def pytest_assertrepr_compare(
        self, config: pytest.Config, op: str, left: object, right: object
    ) -> list[str] | None:
        """``assert trace == expectation``: the expectation's verdict table, the failed
        row marked."""
        assertions = sys.modules.get("harness.assertions")
        if assertions is None or op not in ("==", "!="):
            return None  # no expectation can exist before the module is imported
        if isinstance(right, assertions.Expectation):
            expectation, subject = right, left
        elif isinstance(left, assertions.Expectation):
            expectation, subject = left, right
        else:
            return None
        try:
            verdict = expectation.check(subject, record=False)
        except Exception:
            return None
        if op == "!=":
            return [f"expected the run not to satisfy: {expectation.description} (it does)"]
        if verdict.passed or verdict.failure is None:
            return None
        # below -vv pytest keeps 8 lines: a compact table keeps the marked row in them
        lines: list[str] = verdict.lines(window=10, compact=_assertion_verbosity(config) < 2)
        return lines


def _assertion_verbosity(config: pytest.Config) -> int:
    get = getattr(config, "get_verbosity", None)
    if get is not None:
        return int(get("assertions"))
    return int(config.getoption("verbose"))
