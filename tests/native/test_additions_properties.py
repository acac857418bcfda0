"""Properties of tools added mid-conversation.

1. For a generated tool catalog and an addition schedule (which tools are added after
   which turn), a run through each SDK fake that takes additions (Responses and Messages,
   streamed and not) has the same trace as the run in process, and every injection is
   recorded ``via="addition"`` with ``tools`` never changing on the Responses wire.
2. The requests the Responses and Messages fakes accept are exactly those the provider
   would: a history whose every call comes after its tool was declared or added; a call
   made before the addition that made its tool callable is refused with a 400.
"""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from harness.injection import AddTools
from harness.loop import InjectionContext, InjectionStrategy, Model, ToolsetChange, run
from harness.models import (
    AnthropicModel,
    OpenAIResponsesModel,
    OpenAIWireTransport,
    ScriptedModel,
    fake_anthropic_client,
    fake_openai_client,
    with_capabilities,
)
from harness.models._scripted._steps import call, reply
from harness.tools import Tool

WORDS = [
    "apple", "bridge", "castle", "dragon", "engine", "forest", "garden", "harbor",
    "island", "jungle", "kettle", "lantern",
]  # fmt: skip


def _tool(word: str) -> Tool:
    return Tool.from_schema(
        f"get_{word}",
        f"Get the {word}.",
        {"type": "object", "properties": {}},
        lambda arguments, w=word: f"the {w}",
    )


class Schedule(InjectionStrategy):
    """Injects the tools scheduled for an iteration after its first tool result."""

    def __init__(self, schedule: dict[int, list[str]]) -> None:
        self.schedule = schedule

    @property
    def name(self) -> str:
        return "schedule"

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        state = context.state_for(self)
        if state.get(context.iteration):
            return None
        state[context.iteration] = True
        words = self.schedule.get(context.iteration, [])
        add = tuple(_tool(w) for w in words if f"get_{w}" not in context.offered)
        return ToolsetChange(add=add, reason="scheduled") if add else None


@st.composite
def plans(draw: st.DrawFn) -> dict[str, Any]:
    """A catalog, the tools offered at the start, the additions after each turn and a
    script whose every call is of a tool callable at that turn."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=7, unique=True))
    start = draw(st.lists(st.sampled_from(words), min_size=1, max_size=len(words), unique=True))
    later = [w for w in words if w not in start]
    turns = draw(st.integers(min_value=1, max_value=4))
    schedule: dict[int, list[str]] = {}
    callable_: list[str] = list(start)
    calls: list[str] = []
    for turn in range(1, turns + 1):
        calls.append(draw(st.sampled_from(callable_)))
        added = draw(st.lists(st.sampled_from(later), max_size=2, unique=True)) if later else []
        added = [w for w in added if w not in callable_]
        if added:
            schedule[turn] = added
            callable_.extend(added)
    return {"start": start, "schedule": schedule, "calls": calls}


WAYS = {
    "responses": lambda t: OpenAIResponsesModel(fake_openai_client(t), "gpt-test"),
    "responses-stream": lambda t: OpenAIResponsesModel(
        fake_openai_client(t), "gpt-test", stream=True
    ),
    "anthropic": lambda t: AnthropicModel(fake_anthropic_client(t), "claude-test"),
    "anthropic-stream": lambda t: AnthropicModel(
        fake_anthropic_client(t), "claude-test", stream=True
    ),
}


def _run(plan: dict[str, Any], way: str | None) -> tuple[Any, OpenAIWireTransport | None]:
    steps = [call(f"get_{w}") for w in plan["calls"]] + [reply("done")]
    script = ScriptedModel(steps)
    transport = OpenAIWireTransport(script) if way is not None else None
    model: Model = (
        with_capabilities(script, tool_additions=True)  # the in-process run adds natively too
        if transport is None or way is None
        else WAYS[way](transport)
    )
    strategy = AddTools(Schedule(plan["schedule"]), native="always")
    tools = [_tool(w) for w in plan["start"]]
    return run(model, "go", tools=tools, strategies=[strategy]), transport


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans(), st.sampled_from(sorted(WAYS)))
def test_a_run_through_each_sdk_fake_has_the_in_process_trace(
    plan: dict[str, Any], way: str
) -> None:
    baseline, _ = _run(plan, None)
    result, transport = _run(plan, way)
    assert result.output == baseline.output == "done"
    assert result.trace.to_dict() == baseline.trace.to_dict()
    for it in result.trace.iterations:
        added = plan["schedule"].get(it.index, [])
        assert [n for c in it.changes for n in c.added] == [f"get_{w}" for w in added]
        assert all(c.via == "addition" for c in it.changes)
    assert transport is not None
    if way.startswith("responses"):  # tools never changes on the wire
        declared = {tuple(t["name"] for t in r.body["tools"]) for r in transport.app.requests}
        assert declared == {tuple(f"get_{w}" for w in plan["start"])}


# -- what the fakes accept -----------------------------------------------------------------


@st.composite
def histories(draw: st.DrawFn) -> dict[str, Any]:
    """Declared tools, tools added later by additions at chosen points, and calls of
    those tools at chosen points (maybe before their addition)."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=5, unique=True))
    declared = words[:1]
    added = words[1:]
    events: list[tuple[str, str]] = [("add", w) for w in added]
    events += [("call", w) for w in draw(st.lists(st.sampled_from(words), min_size=1, max_size=4))]
    order = draw(st.permutations(events))
    return {"declared": declared, "added": added, "events": list(order)}


def _valid(history: dict[str, Any]) -> bool:
    """The provider's rule: a call's tool is declared, or was added before the call."""
    callable_ = set(history["declared"])
    for kind, word in history["events"]:
        if kind == "add":
            callable_.add(word)
        elif word not in callable_:
            return False
    return True


def _responses_input(history: dict[str, Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for index, (kind, word) in enumerate(history["events"]):
        if kind == "add":
            items.append(
                {
                    "type": "additional_tools",
                    "role": "developer",
                    "tools": [{"type": "function", "name": f"get_{word}", "parameters": {}}],
                }
            )
        else:
            items.append(
                {
                    "type": "function_call",
                    "call_id": f"c{index}",
                    "name": f"get_{word}",
                    "arguments": "{}",
                }
            )
            items.append({"type": "function_call_output", "call_id": f"c{index}", "output": "ok"})
    return items


def _anthropic_messages(history: dict[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for index, (kind, word) in enumerate(history["events"]):
        if kind == "add":
            reference = {"type": "tool_reference", "name": f"get_{word}"}
            messages.append(
                {"role": "system", "content": [{"type": "tool_addition", "tool": reference}]}
            )
        else:
            use = {"type": "tool_use", "id": f"t{index}", "name": f"get_{word}", "input": {}}
            messages.append({"role": "assistant", "content": [use]})
            result = {"type": "tool_result", "tool_use_id": f"t{index}", "content": "ok"}
            messages.append({"role": "user", "content": [result]})
    return messages


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_the_responses_fake_accepts_exactly_the_histories_the_provider_would(
    history: dict[str, Any],
) -> None:
    client = fake_openai_client(ScriptedModel([reply("ok")]))
    declared = [
        {"type": "function", "name": f"get_{w}", "parameters": {}} for w in history["declared"]
    ]
    arguments = {"model": "gpt-test", "input": _responses_input(history), "tools": declared}
    if _valid(history):
        assert client.responses.create(**arguments).output_text == "ok"
    else:
        with pytest.raises(openai.BadRequestError) as info:
            client.responses.create(**arguments)
        assert info.value.status_code == 400 and "before" in str(info.value)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_the_anthropic_fake_accepts_exactly_the_histories_the_provider_would(
    history: dict[str, Any],
) -> None:
    client = fake_anthropic_client(ScriptedModel([reply("ok")]))
    tools = [
        {"name": f"get_{w}", "input_schema": {"type": "object"}} for w in history["declared"]
    ] + [  # what an addition references is declared deferred
        {"name": f"get_{w}", "input_schema": {"type": "object"}, "defer_loading": True}
        for w in history["added"]
    ]
    arguments = {
        "model": "claude-test",
        "max_tokens": 20,
        "messages": _anthropic_messages(history),
        "tools": tools,
    }
    if _valid(history):
        assert client.messages.create(**arguments).content[0].text == "ok"  # type: ignore[union-attr]
    else:
        with pytest.raises(anthropic.BadRequestError) as info:
            client.messages.create(**arguments)
        assert info.value.status_code == 400 and "before" in str(info.value)
