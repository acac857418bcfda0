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
    # printed once: in the assertion, not again as a report section or in the summary;
    # only the `!=` failure (whose message has no table) gets the timeline as a section
    assert out.count("- harness timeline -") == 1
    assert "harness timeline -" in out.split("test_not_equal_fails __")[1]
    header = "iter  offered  calls                          +injected/-removed"
    # (before pytest's short summary, which repeats whole messages when CI is set)
    failures = out.split("short test summary info")[0]
    assert failures.count(header) == 3  # two assertion messages and the `!=` section
    summary = out.split("harness timelines")[1].split("short test summary")[0]
    assert "iter  offered" not in summary
    result.stdout.fnmatch_lines(
        [
            "test_agent.py::test_compare_fails: diverged at iteration 2: timeline [[]*",
            "test_agent.py::test_verdict_fails: diverged at iteration 2: timeline "
            "[[]'call search_customer', 'call nothing_else'[]]: expected 'call nothing_else'*",
        ]
    )
    assert "test_agent.py::test_passes" not in summary


def test_assert_expect_timeline_shows_only_the_table(agent: pytest.Pytester) -> None:
    result = agent.runpytest("-p", "no:cacheprovider", "-k", "test_verdict_fails")
    out = result.stdout.str()
    failure = out.split("test_verdict_fails __")[1].split("harness timelines")[0]
    assert "where" not in failure  # nothing from the run result
    assert "RunResult(" not in failure
    assert "<Verdict" not in failure
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: timeline [[]'call search_customer', 'call nothing_else'[]]: "
            "expected 'call nothing_else'*",
            "E       >    2        2  customer_c1_get_average_spend    <- expected: "
            "call nothing_else",
        ]
    )


def test_a_failure_outside_an_assertion_keeps_the_timeline_section(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        from harness import call, reply

        def test_boom(harness_runner, harness_scripted):
            harness_runner.run(harness_scripted([reply("done")]), "hi")
            raise RuntimeError("unrelated failure")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "- harness timeline -" in out  # the only place the run is shown
    result.stdout.fnmatch_lines(["*::test_boom: 1 run, 1 iteration, 0 injected tools"])


def test_a_verdict_raises_only_under_the_plugin() -> None:
    from harness import ScriptedModel, _check_sink as _sink, reply, run
    from harness.assertions import expect, expect_timeline, never_called

    result = run(ScriptedModel([reply("done")]), "hi")
    under_plugin = expect_timeline(result, ["call x"])
    assert under_plugin.passed is False
    with pytest.raises(AssertionError, match=r"(?s)expected 'call x'.*iter  offered"):
        bool(under_plugin)
    assert expect(result, never_called("x"))  # passing verdicts stay plain and truthy
    outer = _sink.current()
    _sink.restore(None)  # as outside pytest
    try:
        plain = expect_timeline(result, ["call x"])
    finally:
        _sink.restore(outer)
    assert plain.raise_when_false is False
    assert bool(plain) is False


def test_timeline_option_always_and_never(agent: pytest.Pytester) -> None:
    always = agent.runpytest("-p", "no:cacheprovider", "--harness-timeline=always")
    out = always.stdout.str()
    summary = out.split("harness timelines")[1]
    assert "test_agent.py::test_passes: 1 run, 3 iterations, 1 injected tool" in summary
    assert "run 1: 3 iterations, 1 injected, 0 restarts" in out  # the section of each test
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
    # other installed plugins that import heavy libraries themselves are switched off
    others = ["hypothesispytest", "anyio", "inline_snapshot"]
    result = pytester.runpytest_subprocess("-s", *(f"-pno:{name}" for name in others))
    result.assert_outcomes(passed=1)
    assert "LOADED []" in result.stdout.str()


def test_offered_and_called_failures_print_one_table_each(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_checks="""
        from harness import call, reply, llm_tool
        from harness.assertions import called, offered

        @llm_tool
        def ping() -> str:
            "Ping."
            return "pong"

        def _run(harness_runner, harness_scripted):
            model = harness_scripted([call("ping"), reply("done")])
            return harness_runner.run(model, "hi", tools=[ping])

        def test_offered(harness_runner, harness_scripted):
            assert _run(harness_runner, harness_scripted) == offered(at=2, includes=["pong_*"])

        def test_called(harness_runner, harness_scripted):
            assert _run(harness_runner, harness_scripted) == called("nope")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    failures = out.split("short test summary info")[0]
    assert failures.count("iter  offered  calls") == 2  # one table per failing test
    assert "- harness timeline -" not in out
    result.stdout.fnmatch_lines(
        [
            "*offered at iteration 2 includes [[]'pong_*'[]]: 'pong_*' is not offered*",
            "*>    2        1  (answer)    <- expected: offered pong_*",
            "*called nope: no call matches nope*",
        ]
    )
    summary = out.split("harness timelines")[1].split("short test summary info")[0]
    assert summary.count("test_checks.py::") == 2
    assert "iter  offered" not in summary


MANY_TOOLS = """
from harness import Tool, call, calls, reply
from harness.assertions import offered, injected

TOOLS = [
    Tool.from_function(lambda: "ok", name=f"warehouse_inventory_tool_number_{i:02d}",
                       description="An inventory tool.")
    for i in range(40)
]

def _run(harness_runner, harness_scripted):
    steps = [call(f"warehouse_inventory_tool_number_{i:02d}") for i in range(12)]
    model = harness_scripted([*steps, reply("done")])
    return harness_runner.run(model, "go", tools=TOOLS)

def test_offered(harness_runner, harness_scripted):
    assert _run(harness_runner, harness_scripted) == offered(at=7, includes=["shipping_*"])

def test_injected(harness_runner, harness_scripted):
    assert _run(harness_runner, harness_scripted) == injected("shipping_*", at=9)
"""


def test_the_divergence_row_survives_pytests_truncation(pytester: pytest.Pytester) -> None:
    """At default verbosity pytest keeps 8 lines / 640 characters of an explanation; a
    first line listing every offered name used to push the marked row out of it."""
    pytester.makepyfile(test_many=MANY_TOOLS)
    result = pytester.runpytest("-p", "no:cacheprovider")  # default verbosity
    result.assert_outcomes(failed=2)
    failures = result.stdout.str().split("short test summary info")[0]
    assert "Full output truncated" not in failures
    result.stdout.fnmatch_lines(
        [
            "*offered at iteration 7 includes [[]'shipping_*'[]]: 'shipping_*' is not offered; "
            "offered [[]'warehouse_inventory_tool_number_00', * (+37 more)",
            "*>    7       40  warehouse_inventory_tool_number_06    <- expected: offered ship*",
            "*>    9       40  warehouse_inventory_tool_number_08    <- expected: injected*",
        ]
    )
    whole = pytester.runpytest("-p", "no:cacheprovider", "-vv")
    whole.stdout.fnmatch_lines(["*   1       40  warehouse_inventory_tool_number_00*"])
