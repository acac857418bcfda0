"""A failing test's report names public classes and hides the harness's own frames: the
scripted model, the matchers and the snapshot helpers (issue 26, "exceptions print private
paths")."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

FAILING = """
from harness import ScriptedModel, call, llm_tool, reply, run
from harness.assertions import called


@llm_tool
def add(a: int, b: int) -> int:
    \"\"\"Add two numbers.\"\"\"
    return a + b


def test_the_script_runs_out():
    run(ScriptedModel([call("add", {"a": 1, "b": 2})]), "hi", tools=[add])


def test_a_glob_matches_nothing():
    run(ScriptedModel([call("sub*")]), "hi", tools=[add])


def test_a_matcher_fails():
    result = run(ScriptedModel([reply("none")]), "hi", tools=[add])
    assert result == called("add")


def test_an_inline_snapshot_differs(harness_snapshot):
    result = run(ScriptedModel([reply("none")]), "hi", tools=[add])
    harness_snapshot(result, "#1 offered=[nothing] answer")
"""


def test_failures_show_public_paths_and_hide_harness_frames(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_failing=FAILING)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--tb=long")
    result.assert_outcomes(failed=4)
    output = result.stdout.str()
    assert "harness.ScriptError: script ran out" in output
    assert "harness.ScriptError: step 1" in output
    assert "harness._errors" not in output
    for private in ("_scripted/_model.py", "assertions/_verdict.py", "testing/_snapshot.py"):
        assert private not in output, private
