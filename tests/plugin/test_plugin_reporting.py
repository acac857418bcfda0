"""Assertion failure output, the terminal summary, JUnit properties, lazy imports."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

AGENT_TESTS = """
import pytest
from harness import call, reply, llm_tool, tool_provider, EntityDiscovery
from harness.assertions import expect_timeline, injected, timeline, never_called

@tool_provider(prefix="customer")
class Customer:
    def __init__(self, id):
        self.id = id

    @llm_tool
    def get_average_spend(self) -> float:
        "Average spend."
        return 12.5

@llm_tool
def search_customer(name: str) -> list:
    "Find customers."
    return [Customer("c1")]

def _run(harness_runner, harness_scripted):
    model = harness_scripted([
        call("search_customer", {"name": "Ann"}),
        call("customer_*_get_average_spend"),
        reply("12.5"),
    ])
    return harness_runner.run(model, "spend?", tools=[search_customer],
                              strategies=[EntityDiscovery()])

def test_passes(harness_runner, harness_scripted):
    result = _run(harness_runner, harness_scripted)
    assert result.trace == timeline(["call search_customer", "offered gains customer_*",
                                     "call customer_*_get_average_spend", "answer"])

def test_compare_fails(harness_runner, harness_scripted):
    result = _run(harness_runner, harness_scripted)
    assert result.trace == timeline(["call search_customer", "offered gains order_*",
                                     "call customer_*_get_average_spend", "answer"])

def test_verdict_fails(harness_runner, harness_scripted):
    result = _run(harness_runner, harness_scripted)
    assert expect_timeline(result, ["call search_customer", "call nothing_else"])

def test_not_equal_fails(harness_runner, harness_scripted):
    result = _run(harness_runner, harness_scripted)
    assert result.trace != never_called("delete_*")
"""


@pytest.fixture
def agent(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_agent=AGENT_TESTS)
    return pytester


def test_failure_output_shows_the_marked_timeline(agent: pytest.Pytester) -> None:
    result = agent.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=3)
    out = result.stdout.str()
    # pytest_assertrepr_compare: description, problem, table with the divergence marked
    assert (
        "timeline ['call search_customer', 'offered gains order_*', "
        "'call customer_*_get_average_spend', 'answer']: expected 'offered gains order_*' "
        "at iteration 2: gained ['customer_c1_get_average_spend']"
    ) in out
    result.stdout.fnmatch_lines(
        [
            "*iter  offered  calls                          +injected/-removed",
            "*   1        1  search_customer                +customer_c1_get_average_spend",
            "*>    2        2  customer_c1_get_average_spend    <- expected: offered gains order_*",
        ]
    )
    assert "expected the run not to satisfy: never called ['delete_*'] (it does)" in out
    # the report section (in the failure) and the terminal summary section
    assert "- harness timeline -" in out
    summary = out.split("harness timelines")[1]
    assert "test_agent.py::test_compare_fails" in summary
    assert "test_agent.py::test_verdict_fails" in summary
    assert "test_agent.py::test_passes" not in summary
    assert "failed: timeline ['call search_customer', 'call nothing_else']" in summary


def test_timeline_option_always_and_never(agent: pytest.Pytester) -> None:
    always = agent.runpytest("-p", "no:cacheprovider", "--harness-timeline=always")
    summary = always.stdout.str().split("harness timelines")[1]
    assert "test_agent.py::test_passes" in summary
    assert "run 1: 3 iterations, 1 injected, 0 restarts" in summary
    never = agent.runpytest("-p", "no:cacheprovider", "--harness-timeline=never")
    out = never.stdout.str()
    assert "harness timelines" not in out
    assert "- harness timeline -" not in out
    agent.makeini("[pytest]\nharness_timeline = never\n")
    assert "harness timelines" not in agent.runpytest().stdout.str()


def test_junit_properties(agent: pytest.Pytester) -> None:
    xml = agent.path / "junit.xml"
    agent.runpytest("-p", "no:cacheprovider", f"--junitxml={xml}")
    cases = {case.get("name"): case for case in ET.parse(xml).iter("testcase")}
    props = {p.get("name"): p.get("value") for p in cases["test_passes"].iter("property")}
    assert props == {
        "harness_runs": "1",
        "harness_iterations": "3",
        "harness_injected_tools": "1",
        "harness_injected": "customer_c1_get_average_spend",
        "harness_restarts": "0",
    }


def test_plain_tests_get_no_harness_output(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    assert 1 == 2\n")
    xml = pytester.path / "junit.xml"
    result = pytester.runpytest(f"--junitxml={xml}")
    assert "harness timeline" not in result.stdout.str()
    assert "property" not in xml.read_text()


def test_importing_the_plugin_imports_nothing_heavy() -> None:
    code = (
        "import sys, harness.pytest_plugin\n"
        "heavy = ['openai', 'vcr', 'hypothesis', 'pydantic', 'harness.loop', 'httpx2', 'yaml',"
        " 'mcp', 'harness.mcp']\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_a_plain_session_imports_nothing_heavy(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import sys

        def test_x():
            heavy = ["openai", "vcr", "hypothesis", "pydantic", "harness.loop"]
            print("LOADED", sorted(m for m in heavy if m in sys.modules))
        """
    )
    result = pytester.runpytest_subprocess("-s", "-p", "no:hypothesispytest", "-p", "no:anyio")
    result.assert_outcomes(passed=1)
    assert "LOADED []" in result.stdout.str()
