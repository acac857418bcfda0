"""Playbooks: unlock conditions, gated and hidden visibility, composition with chaining."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from harness import (
    CallContext,
    Playbook,
    ScriptedModel,
    ToolChaining,
    UsageError,
    call,
    calls,
    llm_tool,
    reply,
    run,
    unlock,
)
from harness.injection import called_all, called_any, in_state, produced, was_called, when


@dataclasses.dataclass
class Report:
    title: str

    @llm_tool
    def report_title(self) -> str:
        """The report's title."""
        return self.title


@llm_tool
def search() -> str:
    """Search."""
    return "found"


@llm_tool
def fetch() -> str:
    """Fetch."""
    return "fetched"


@llm_tool
def draft() -> Report:
    """Draft a report."""
    return Report("r1")


@llm_tool
def drafts() -> list[Report]:
    """Draft several reports."""
    return [Report("a"), Report("b")]


@llm_tool
def remember(context: CallContext) -> str:
    """Remember a plan."""
    context.state["plan"] = "do it"
    return "ok"


@llm_tool
def locked_tool() -> str:
    """The tool being unlocked."""
    return "unlocked!"


@llm_tool
def broken() -> str:
    """Always fails."""
    raise RuntimeError("nope")


def offered(model: ScriptedModel) -> list[tuple[str, ...]]:
    return [r.tool_names for r in model.requests]


def test_gated_tool_is_offered_and_names_missing_prerequisites() -> None:
    book = Playbook(
        always=[search, fetch], unlocks=[unlock(locked_tool, when=called_all("search", "fetch"))]
    )
    model = ScriptedModel(
        [
            call("locked_tool"),
            call("search"),
            call("locked_tool"),
            call("fetch"),
            call("locked_tool"),
            reply("ok"),
        ]
    )
    result = run(model, "go", strategies=[book])
    assert set(offered(model)) == {("search", "fetch", "locked_tool")}
    first, _, second, _, third = result.trace.calls
    assert first.is_error and first.error_kind == "locked"
    assert "it unlocks when search and fetch were called" in first.content
    assert "Still missing: call search; call fetch." in first.content
    assert "Still missing: call fetch." in second.content and "call search" not in second.content
    assert not third.is_error and third.content == "unlocked!"
    unlock_change = result.trace.changes[-1]
    assert unlock_change.strategy == "playbook"
    assert unlock_change.replaced == ("locked_tool",)
    assert unlock_change.after_call == "fetch"
    assert unlock_change.reason == "unlocked locked_tool: search and fetch were called"


def test_hidden_tool_appears_once_unlocked() -> None:
    book = Playbook(always=[search], unlocks=[unlock(locked_tool, when="search")], mode="hidden")
    model = ScriptedModel([call("search"), call("locked_tool"), reply("ok")])
    result = run(model, "go", strategies=[book])
    assert offered(model) == [
        ("search",),
        ("search", "locked_tool"),
        ("search", "locked_tool"),
    ]
    start, unlocked = result.trace.changes
    assert start.added == ("search",) and start.after_call is None
    assert "locked (hidden): locked_tool" in start.reason
    assert unlocked.added == ("locked_tool",) and unlocked.after_call == "search"


def test_any_of_several() -> None:
    book = Playbook(
        always=[search, fetch],
        unlocks=[unlock(locked_tool, when=called_any("search", "fetch"))],
        mode="hidden",
    )
    model = ScriptedModel([call("fetch"), reply("ok")])
    run(model, "go", strategies=[book])
    assert offered(model) == [("search", "fetch"), ("search", "fetch", "locked_tool")]


def test_failed_calls_do_not_count() -> None:
    book = Playbook(always=[broken], unlocks=[unlock(locked_tool, when="broken")], mode="hidden")
    model = ScriptedModel([call("broken"), reply("ok")])
    run(model, "go", strategies=[book])
    assert offered(model) == [("broken",), ("broken",)]


def test_artifact_type_produced_alone_or_in_a_list() -> None:
    for producer in (draft, drafts):
        book = Playbook(
            always=[producer, search],
            unlocks=[unlock(locked_tool, when=produced(Report))],
            mode="hidden",
        )
        model = ScriptedModel([call("search"), call(producer.__name__), reply("ok")])
        result = run(model, "go", strategies=[book])
        name = producer.__name__
        assert offered(model) == [
            (name, "search"),
            (name, "search"),
            (name, "search", "locked_tool"),
        ]
        assert result.trace.changes[-1].reason == "unlocked locked_tool: a Report was produced"


def test_blackboard_value_present() -> None:
    book = Playbook(always=[remember], unlocks=[unlock(locked_tool, when=in_state("plan"))])
    model = ScriptedModel([call("locked_tool"), call("remember"), call("locked_tool"), reply("ok")])
    result = run(model, "go", strategies=[book])
    assert "Still missing: put 'plan' in the shared state." in result.trace.calls[0].content
    assert result.trace.calls[2].content == "unlocked!"


def test_blackboard_value_set_by_the_caller_unlocks_at_once() -> None:
    book = Playbook(unlocks=[unlock(locked_tool, when=in_state("plan"))], mode="hidden")
    model = ScriptedModel([call("locked_tool"), reply("ok")])
    run(model, "go", strategies=[book], state={"plan": "given"})
    assert offered(model) == [("locked_tool",), ("locked_tool",)]


def test_custom_predicate_over_iteration() -> None:
    book = Playbook(
        always=[search],
        unlocks=[unlock(locked_tool, when=when(lambda c: c.iteration >= 3, "iteration >= 3"))],
        mode="hidden",
    )
    model = ScriptedModel([call("search"), call("search"), call("locked_tool"), reply("ok")])
    result = run(model, "go", strategies=[book])
    assert offered(model) == [
        ("search",),
        ("search",),
        ("search", "locked_tool"),
        ("search", "locked_tool"),
    ]
    change = result.trace.iterations[2].changes[0]
    assert change.after_call is None and change.reason == "unlocked locked_tool: iteration >= 3"


def test_tools_passed_to_run_are_gated_or_hidden_too() -> None:
    book = Playbook(unlocks=[unlock(locked_tool, when="search")], known=["search"])
    model = ScriptedModel([call("locked_tool"), call("search"), call("locked_tool"), reply("ok")])
    result = run(model, "go", tools=[search, locked_tool], strategies=[book])
    assert set(offered(model)) == {("search", "locked_tool")}
    assert result.trace.calls[0].is_error and result.trace.calls[2].content == "unlocked!"
    hidden = Playbook(unlocks=[unlock(locked_tool, when="search")], known=["search"], mode="hidden")
    model = ScriptedModel([call("search"), reply("ok")])
    run(model, "go", tools=[search, locked_tool], strategies=[hidden])
    assert offered(model) == [("search",), ("search", "locked_tool")]


def test_chained_domain_tools_are_available_regardless() -> None:
    book = Playbook(
        always=[draft],
        unlocks=[unlock(locked_tool, when="search")],
        mode="hidden",
        known=["search"],
    )
    model = ScriptedModel([call("draft"), call("report_title"), reply("ok")])
    result = run(model, "go", strategies=[book, ToolChaining([Report])])
    assert offered(model) == [
        ("draft", "report_title"),
        ("draft", "report_title"),
        ("draft", "report_title"),
    ]
    assert result.trace.calls[1].content == "r1"


def test_parallel_calls_unlock_after_the_turn_order() -> None:
    book = Playbook(always=[search], unlocks=[unlock(locked_tool, when="search")])
    model = ScriptedModel([calls(call("search"), call("locked_tool")), reply("ok")])
    result = run(model, "go", strategies=[book])
    # the gate answered before search's result was seen: still locked in that turn
    assert result.trace.calls[1].is_error
    assert offered(model)[1] == ("search", "locked_tool")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: Playbook(always=[search], unlocks=[unlock(locked_tool, when="serch")]),
            r"names unknown tool 'serch' \(did you mean 'search'\?\)",
        ),
        (
            lambda: Playbook(unlocks=[unlock(locked_tool, when=called_any("x", "search"))]),
            "names unknown tool 'x'",
        ),
        (lambda: Playbook(mode="visible"), "mode must be one of 'gated', 'hidden', got 'visible'"),  # type: ignore[arg-type]
        (lambda: Playbook(unlocks=[locked_tool]), "must be unlock"),  # type: ignore[list-item]
        (lambda: Playbook(always=[search, search]), "appear more than once"),
        (lambda: unlock(when="x"), "needs one or more tools"),
        (lambda: unlock(search, when=42), "must be a Condition"),  # type: ignore[arg-type]
        (lambda: called_all(), "needs one or more tool names"),
        (lambda: produced("Report"), "needs a class"),  # type: ignore[arg-type]
        (lambda: in_state(""), "needs a key"),
        (lambda: when(3, "x"), "needs a function"),  # type: ignore[arg-type]
        (lambda: when(lambda c: True, ""), "needs a description"),
    ],
)
def test_bad_input_at_construction(build: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        build()


def test_condition_descriptions() -> None:
    assert was_called("a").describe() == "a was called"
    assert called_any("a", "b").describe() == "a or b was called"
    assert called_all("a", "b").describe() == "a and b were called"
    assert produced(Report).describe() == "a Report was produced"
    assert in_state("k").describe() == "'k' is in the shared state"
    assert unlock(search, when=["a", "b"]).condition.describe() == "a and b were called"


def test_hooks_before_start_do_nothing() -> None:
    from harness.loop import InjectionContext

    book = Playbook(always=[search])
    context = InjectionContext(history=[], offered=(), tools={}, iteration=1, state={})
    assert book.on_tool_result(context) == []


def test_conditions_are_immutable_hashable_values() -> None:
    import dataclasses as _dc

    for condition in (in_state("ticket"), produced(dict)):
        assert hash(condition) == hash(condition)
        with pytest.raises(_dc.FrozenInstanceError):
            condition.key = "other"  # type: ignore[attr-defined]
