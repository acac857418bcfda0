"""The public invariants checker: each invariant is caught when broken, sound runs pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import MaxIterationsExceeded, ScriptedModel, call, reply, run
from harness.loop import ChangeRecord, IterationRecord, LimitReached, RunResult, Trace
from harness.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.scenarios import (
    INVARIANTS,
    check_invariants,
    format_violations,
    load_scenario,
    run_scenario,
)
from harness.tools import Tool, ToolDefinition

_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}


def _tool(name: str) -> Tool:
    return Tool.from_schema(name, f"tool {name}", _SCHEMA, lambda args: f"{name} ok")


def _sound_run() -> RunResult:
    model = ScriptedModel([call("a", id="c1"), call("b", id="c2"), reply("done")])
    return run(model, "go", tools=[_tool("a"), _tool("b")])


def test_a_sound_run_has_no_violations() -> None:
    result = _sound_run()
    assert check_invariants(result.trace, result.messages, max_iterations=20) == []
    assert set(INVARIANTS) >= {"history", "calls_answered", "toolset_explained", "secrets"}


def test_a_dropped_tool_message_is_caught() -> None:
    result = _sound_run()
    messages = [m for m in result.messages if getattr(m, "tool_call_id", None) != "c1"]
    found = check_invariants(result.trace, messages)
    kinds = {v.invariant for v in found}
    assert {"history", "calls_answered"} <= kinds
    assert "'c1'" in format_violations(found)


def test_reordered_and_duplicated_answers_are_caught() -> None:
    calls = (ToolCall(id="x", name="a"), ToolCall(id="y", name="a"))
    messages: list[Message] = [
        UserMessage(content="go"),
        AssistantMessage(tool_calls=calls),
        ToolMessage(tool_call_id="y", content="1"),
        ToolMessage(tool_call_id="x", content="2"),
        ToolMessage(tool_call_id="x", content="3"),
        AssistantMessage(tool_calls=(ToolCall(id="x", name="a"),)),
        UserMessage(content="interrupts"),
    ]
    text = format_violations(check_invariants(Trace(), messages))
    assert "expected the tool message for call 'x', got one for 'y'" in text
    assert "answers no pending tool call" in text
    assert "'x' is used twice" in text
    assert "comes before the tool messages of calls ['x']" in text


def test_an_unexplained_toolset_change_is_caught() -> None:
    trace = Trace(
        initial_tools=("a",),
        iterations=[
            IterationRecord(index=1, offered=("a",), finish_reason="tool_calls"),
            IterationRecord(index=2, offered=("a", "sneaky"), finish_reason="stop"),
        ],
    )
    (violation,) = check_invariants(trace, [])
    assert violation.invariant == "toolset_explained" and violation.iteration == 2
    assert "unexplained ['sneaky']" in violation.message


def test_a_tool_offered_before_it_is_injected_is_caught() -> None:
    late = ChangeRecord(strategy="buggy", reason="late", added=("b",), after_call="a")
    trace = Trace(
        initial_tools=("a", "b"),
        iterations=[IterationRecord(index=1, offered=("a", "b"), changes=(late,))],
    )
    (violation,) = check_invariants(trace, [])
    assert "'buggy' injected ['b'], which were already offered" in violation.message


def test_recorded_changes_explain_the_next_request() -> None:
    change = ChangeRecord(strategy="s", reason="r", added=("b",), removed=("a",), after_call="a")
    trace = Trace(
        initial_tools=("a",),
        iterations=[
            IterationRecord(index=1, offered=("a",), changes=(change,)),
            IterationRecord(index=2, offered=("b",)),
        ],
    )
    assert check_invariants(trace, []) == []
    # a replace puts back a tool that is missing (Toolset.replace adds it)
    back = ChangeRecord(strategy="s", reason="r", replaced=("a",), after_call="b")
    trace.iterations[1] = IterationRecord(index=2, offered=("b",), changes=(back,))
    trace.iterations.append(IterationRecord(index=3, offered=("b", "a")))
    assert check_invariants(trace, []) == []
    del trace.iterations[2]
    no_reason = ChangeRecord(strategy="s", reason="", added=("b",), after_call="a")
    trace.iterations[0] = IterationRecord(index=1, offered=("a",), changes=(no_reason,))
    assert "has no reason" in format_violations(check_invariants(trace, []))


def test_invalid_and_duplicate_names_are_caught() -> None:
    trace = Trace(
        initial_tools=("bad name", "x", "x"),
        iterations=[IterationRecord(index=1, offered=("bad name", "x", "x"))],
    )
    text = format_violations(check_invariants(trace, []))
    assert "['bad name'] are not valid provider names" in text
    assert "names offered twice on one request: ['x']" in text


def test_limits_are_checked() -> None:
    model = ScriptedModel([call("a"), call("a"), call("a")])
    with pytest.raises(MaxIterationsExceeded) as info:
        run(model, "go", tools=[_tool("a")], max_iterations=2)
    error = info.value
    assert error.trace is not None and error.messages is not None
    assert check_invariants(error.trace, error.messages, error=error, max_iterations=2) == []
    text = format_violations(
        check_invariants(error.trace, error.messages, error=error, max_iterations=1)
    )
    assert "over max_iterations=1" in text and "not max_iterations=1" in text
    error.trace.events.append(LimitReached(iteration=2, limit="x", value=1, message="m"))
    error.trace.events.pop()
    error.trace.events.pop()
    assert "without a LimitReached event" in format_violations(
        check_invariants(error.trace, error.messages, error=error)
    )
    untyped = check_invariants(Trace(), [], error=KeyError("k"))
    assert "untyped error KeyError" in format_violations(untyped)


def test_secrets_are_looked_for_everywhere_the_model_looks() -> None:
    result = _sound_run()
    secret = "sk-top-secret-1"
    assert check_invariants(result.trace, result.messages, secrets=[secret]) == []
    leaky = [*result.messages, UserMessage(content=f"key is {secret}")]
    found = check_invariants(result.trace, leaky, secrets=[secret, "ab"])
    assert [v.invariant for v in found] == ["secrets"]
    assert secret not in str(found[0])  # the report does not repeat the secret
    definition = ToolDefinition(name="t", description=secret)
    (hit,) = check_invariants(
        result.trace, result.messages, secrets=[secret], definitions=[definition]
    )
    assert "definition of 't'" in hit.message


SCENARIO = """
name: invariants_checked
prompt: hi
tools:
  - fixtures.customers:search_customer
strategies: [entity_discovery]
context: {api_key: sk-scenario-secret}
model:
  steps:
    - {call: search_customer, args: {name: John Smith}}
    - {reply: done}
expect:
  invariants: true
"""


def test_a_scenario_can_ask_for_the_invariants(tmp_path: Path) -> None:
    path = tmp_path / "scenarios" / "inv.yaml"
    path.parent.mkdir()
    path.write_text(SCENARIO, encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    import sys

    sys.path.insert(0, str(root))
    try:
        outcome = run_scenario(load_scenario(path))
        assert outcome.passed, outcome.problem
        leaking = SCENARIO.replace("{reply: done}", "{reply: 'the key is sk-scenario-secret'}")
        path.write_text(leaking, encoding="utf-8")
        outcome = run_scenario(load_scenario(path))
        assert not outcome.passed
        assert outcome.problem is not None and "[secrets]" in outcome.problem
    finally:
        sys.path.remove(str(root))


def test_tool_factory_entries_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        SCENARIO.replace(
            "fixtures.customers:search_customer",
            '{"harness.fuzz:universe_tools": {"universe": {"kind": "nope"}}}',
        ),
        encoding="utf-8",
    )
    scenario = load_scenario(path)
    from harness import ScenarioError

    with pytest.raises(ScenarioError, match=r"tool factory 'harness.fuzz:universe_tools' refused"):
        scenario.build_tools()
    path.write_text(
        SCENARIO.replace("fixtures.customers:search_customer", '{"a:b": 1, "c:d": 2}'),
        encoding="utf-8",
    )
    with pytest.raises(ScenarioError, match="must be"):
        load_scenario(path).build_tools()


def test_a_facade_putting_back_what_an_exclusive_facade_hid_is_caught() -> None:
    # the trace the facades left before exclusivity held across one turn
    hide = ChangeRecord(
        strategy="unfolding",
        reason="ex was called: unfolded 'ex' into a1; exclusive: hid other, plain",
        added=("a1",),
        removed=("other", "plain"),
        replaced=("ex",),
        after_call="ex",
    )
    back = ChangeRecord(
        strategy="unfolding",
        reason="plain was called: unfolded 'plain' into b1",
        added=("b1",),
        replaced=("plain",),
        after_call="plain",
    )
    trace = Trace(initial_tools=("other", "ex", "plain"))
    trace.iterations.append(
        IterationRecord(index=1, offered=("other", "ex", "plain"), changes=(hide, back))
    )
    (violation,) = [v for v in check_invariants(trace, []) if v.invariant == "exclusive"]
    assert "put back ['plain']" in violation.message and violation.iteration == 1
    fine = Trace(initial_tools=("other", "ex", "plain"))
    fine.iterations.append(
        IterationRecord(index=1, offered=("other", "ex", "plain"), changes=(hide,))
    )
    assert [v for v in check_invariants(fine, []) if v.invariant == "exclusive"] == []
