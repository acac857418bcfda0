"""``--harness-otel FILE``: every run the tests made, as OTLP JSON tagged with its test."""

from __future__ import annotations

import pytest

from harness.traces import otel_conversations

TESTS = """
from harness import ScriptedModel, call, llm_tool, reply, run
from harness.assertions import called

@llm_tool
def add(a: int, b: int) -> int:
    '''Add.'''
    return a + b

def test_runs():
    result = run(ScriptedModel([call("add", a=1, b=2), reply("3")]), "1+2?", tools=[add])
    assert result.trace == called("add")

def test_fails():
    result = run(ScriptedModel([reply("hi")]), "hello", tools=[add])
    assert result.output == "bye"
"""


@pytest.mark.parametrize("where", ["option", "ini"])
def test_every_run_is_written_with_its_test(pytester: pytest.Pytester, where: str) -> None:
    pytester.makepyfile(test_runs=TESTS)
    args = ["-p", "no:cacheprovider"]
    if where == "option":
        args.append("--harness-otel=out/runs.otlp.jsonl")
    else:
        pytester.makeini("[pytest]\nharness_otel = out/runs.otlp.jsonl\n")
    pytester.runpytest(*args).assert_outcomes(passed=1, failed=1)
    found = otel_conversations(pytester.path / "out" / "runs.otlp.jsonl")
    assert [c.root.get("harness.test") for c in found if c.root] == [
        "test_runs.py::test_runs",
        "test_runs.py::test_fails",
    ]
    assert [c.root.get("harness.test.outcome") for c in found if c.root] == ["passed", "failed"]
    assert [len(c.trace()) for c in found] == [2, 1]


def test_without_the_option_nothing_is_written(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_runs=TESTS)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1, failed=1)
    assert not list(pytester.path.rglob("*.otlp.jsonl"))
