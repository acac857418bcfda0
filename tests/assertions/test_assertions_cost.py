"""``cache_breaks`` and ``no_cache_break``: judged on a cost report, explained with the
timeline (breaks marked) and the per-request table."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import UsageError
from harness.assertions import cache_breaks, expect, injected, no_cache_break, render_table
from harness.cost import CostReport, analyse, record_requests
from harness.scenarios import load_scenario, run_scenario, timeline_rows

FACADE = (
    Path(__file__).resolve().parents[2] / "scenarios" / "unfolding" / "category_file_tools.yaml"
)


@pytest.fixture(scope="module")
def report() -> CostReport:
    """file_tools unfolds at iterations 1 and 5: requests 2 and 6 break the cache."""
    with record_requests() as log:
        assert run_scenario(load_scenario(FACADE)).passed
    return analyse(log, format="anthropic-messages")


def test_breaks_are_checked_by_request_cause_and_strategy(report: CostReport) -> None:
    assert report == cache_breaks(2, 6)
    assert report == cache_breaks(count=2, cause="tools-changed", by="unfolding")
    assert report == cache_breaks()
    assert report != cache_breaks(2)
    assert report != cache_breaks(2, 6, by="discovery")
    assert report != cache_breaks(count=0)
    assert report == no_cache_break(after=6)
    assert report == no_cache_break(cause="system-changed")
    assert report != no_cache_break(after=5)


def test_a_failure_marks_the_break_in_the_timeline_and_shows_the_costs(
    report: CostReport,
) -> None:
    verdict = expect(report, no_cache_break(after=1))
    assert not verdict.passed
    lines = verdict.explain().splitlines()
    assert lines[0] == (
        "no cache break after request 1: request 2 broke the cache: #2 tools-changed by "
        f"unfolding (first difference in tools, {report.breaks[0].lost_tokens} tokens no "
        "longer cached)"
    )
    marked = [line for line in lines if line.startswith(">")]
    assert marked and marked[0].split()[1] == "2"
    assert "[cache break: tools-changed by unfolding]" in marked[0]
    assert any(line.startswith("req  run  input") for line in lines)  # the cost table
    compact = verdict.lines(compact=True)
    assert len(compact) <= 8 and not any(line.startswith("req ") for line in compact)


def test_expect_mixes_trace_and_cost_expectations(report: CostReport) -> None:
    assert expect(report, injected("read_file"), cache_breaks(2, 6)).passed
    assert not expect(report, injected("read_file"), cache_breaks(3)).passed


def test_the_timeline_table_marks_cache_breaks_by_iteration(report: CostReport) -> None:
    assert report.trace is not None
    table = render_table(timeline_rows(report.trace), cache={2: "tools-changed"})
    assert table[2].endswith("[cache break: tools-changed]") and "cache" not in table[3]


def test_cost_expectations_need_a_cost_report(report: CostReport) -> None:
    with pytest.raises(UsageError, match=r"judge a harness.cost.CostReport"):
        expect(report.trace, no_cache_break())
    assert (no_cache_break() == report.trace) is False  # not comparable: never equal
    with pytest.raises(UsageError, match="cause"):
        no_cache_break(cause="tool-change")
    with pytest.raises(UsageError, match=">= 1"):
        cache_breaks(0)
    with pytest.raises(UsageError, match="not both"):
        cache_breaks(2, count=3)
    with pytest.raises(UsageError, match="after"):
        no_cache_break(after=-1)
