"""Changes made before the first model request set up the starting toolset: they are
recorded (``ChangeRecord.initial``) but are not injections."""

from __future__ import annotations

import pytest

from harness import Playbook, ScriptedModel, call, llm_tool, reply, run, unlock
from harness.assertions import expect, expect_timeline, injected, offered
from harness.loop import ChangeRecord, IterationRecord, Trace


@llm_tool
def search() -> str:
    """Search."""
    return "found"


@llm_tool
def publish() -> str:
    """Publish."""
    return "published"


def _run() -> Trace:
    book = Playbook(always=[search], unlocks=[unlock(publish, when="search")], mode="hidden")
    model = ScriptedModel([call("search"), call("publish"), reply("done")])
    result = run(model, "go", strategies=[book])
    assert result.tools_injected == ["publish"]
    return result.trace


def test_the_playbooks_first_tools_are_set_up_not_injected() -> None:
    trace = _run()
    start, unlocked = trace.changes
    assert start.initial and start.added == ("search",)
    assert not unlocked.initial and unlocked.after_call == "search"
    first = trace.iterations[0]
    assert first.set_up == ("search",)
    assert first.injected == ("publish",)  # injected after the call of search
    assert trace.injected == ["publish"]
    assert trace.initial_tools == ()
    assert trace.offered_at_start == ("search",)
    assert start.to_dict()["initial"] is True and unlocked.to_dict()["initial"] is False


def test_assertions_do_not_count_the_set_up_as_injections() -> None:
    trace = _run()
    assert expect(trace, injected("publish", at=1, after_call="search"))
    assert expect(trace, offered(at=1, includes="search"))
    verdict = injected("search", at=1).check(trace, record=False)
    assert verdict.passed is False  # bool() would raise the table under the plugin
    text = str(verdict.problem)
    assert "set up before the first request" in text and "offered_at_start" in text
    assert trace == injected("publish")
    assert trace != injected("search")
    assert expect_timeline(trace, ["call search", "injected publish", "call publish"])
    assert expect_timeline(trace, ["injected search", "call search"]).passed is False


def test_a_before_turn_change_later_in_the_run_is_an_injection() -> None:
    later = ChangeRecord(strategy="s", reason="r", added=("x",))
    first = ChangeRecord(strategy="s", reason="r", added=("a",), initial=True)
    trace = Trace(
        iterations=[
            IterationRecord(index=1, offered=("a",), changes=(first,)),
            IterationRecord(index=2, offered=("a", "x"), changes=(later,)),
        ]
    )
    assert trace.injected == ["x"]
    assert trace.offered_at_start == ("a",)
    assert trace.iterations[1].set_up == ()


def test_offered_at_start_of_an_empty_trace_is_the_initial_toolset() -> None:
    assert Trace(initial_tools=("a", "b")).offered_at_start == ("a", "b")


@pytest.mark.parametrize("mode", ["gated", "hidden"])
def test_removals_before_the_first_request_are_not_reported(mode: str) -> None:
    book = Playbook(always=[search], unlocks=[unlock(publish, when="search")], mode=mode)
    model = ScriptedModel([reply("done")])
    result = run(model, "go", tools=[publish], strategies=[book])
    assert result.trace.iterations[0].removed == ()
    assert result.trace.injected == []
