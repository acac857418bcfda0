"""The plugin's cost summary per test and the ``--harness-html`` page."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = """
from harness import call, reply, llm_tool, ScriptedModel, run
from harness.assertions import no_cache_break
from harness.cost import analyse, record_requests
from harness.injection import EntityDiscovery

@llm_tool
def lookup(name: str) -> str:
    "Look a customer up."
    return name

def _report():
    with record_requests() as log:
        run(ScriptedModel([call("lookup", {"name": "Ann"}), reply("done")]), "who?", tools=[lookup])
    return analyse(log, format="anthropic-messages")

def test_costed():
    assert _report() == no_cache_break()

def test_costed_and_failing():
    assert _report().input_tokens == -1

def test_plain():
    assert 1 + 1 == 2
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_costs=TESTS)
    return pytester


def test_a_test_that_analysed_costs_gets_a_summary_line(project: pytest.Pytester) -> None:
    result = project.runpytest("--harness-timeline=always")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "test_costs.py::test_costed: 1 run, 2 iterations, 0 injected tools, " in out
    assert "input tokens (0% cached, 0 cache breaks)" in out
    assert "cost: 2 requests" in out  # the report section of the failing test
    assert "test_plain:" not in out


def test_harness_html_writes_one_page_with_each_costed_run(project: pytest.Pytester) -> None:
    result = project.runpytest("--harness-html=report/page.html")
    result.assert_outcomes(passed=2, failed=1)
    page = (Path(str(project.path)) / "report" / "page.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert page.count('<svg class="chart"') == 2
    assert "test_costs.py::test_costed" in page and "test_costs.py::test_costed_and_failing" in page
    assert "test_plain" not in page
    assert '<td class="fail">no</td>' in page and '<td class="pass">yes</td>' in page


def test_without_the_option_no_page_is_written(project: pytest.Pytester) -> None:
    project.runpytest().assert_outcomes(passed=2, failed=1)
    assert not list(Path(str(project.path)).rglob("*.html"))
