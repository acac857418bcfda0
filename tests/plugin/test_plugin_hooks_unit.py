"""Plugin hooks called directly: assertion rendering edge cases, cassette under allow."""

from __future__ import annotations

import pytest

from harness._plugin._reporter import REPORTER_NAME, HarnessReporter
from harness.assertions import has_iterations, never_called
from harness.loop import IterationRecord, Trace

TRACE = Trace(iterations=[IterationRecord(index=1, offered=("a",), finish_reason="stop")])


def test_assertrepr_only_for_expectations_on_traces(pytestconfig: pytest.Config) -> None:
    reporter = pytestconfig.pluginmanager.get_plugin(REPORTER_NAME)
    assert isinstance(reporter, HarnessReporter)
    compare = reporter.pytest_assertrepr_compare
    assert compare(pytestconfig, "==", 1, 2) is None
    assert compare(pytestconfig, "<", TRACE, has_iterations(2)) is None
    assert compare(pytestconfig, "==", has_iterations(2), "not a trace") is None
    assert compare(pytestconfig, "==", TRACE, has_iterations(1)) is None  # it holds
    lines = compare(pytestconfig, "==", has_iterations(2), TRACE)
    assert lines is not None
    assert lines[0] == "2 iterations: expected 2 iterations, got 1"
    assert lines[1].split() == ["iter", "offered", "calls", "+injected/-removed"]
    negated = compare(pytestconfig, "!=", TRACE, never_called("x"))
    assert negated == ["expected the run not to satisfy: never called ['x'] (it does)"]


def test_cassette_marker_works_with_the_network_allowed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.harness_cassette(record_mode="all")
        def test_x(harness_cassette):
            assert harness_cassette.play_count == 0
        """
    )
    pytester.runpytest("--harness-network=allow").assert_outcomes(passed=1)
