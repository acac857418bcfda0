"""Tools added mid-conversation, end to end: a strategy delivering by addition through the
real ``openai`` and ``anthropic`` SDKs against the wire fakes (streamed and not), what the
bodies carry on the wire, and the providers' 400s for a call made before its addition and
for an addition of a tool nobody defined."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anthropic
import openai
import pytest

from harness import StrategyError, UsageError, run
from harness.assertions import injected
from harness.formats import anthropic_messages
from harness.injection import AddTools, Delivery, EntityDiscovery
from harness.loop import InjectionContext, InjectionStrategy, Model, ToolsetChange
from harness.models import (
    AnthropicModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
    OpenAIWireTransport,
    ScriptedModel,
    fake_anthropic_client,
    fake_openai_client,
)
from harness.models._scripted._steps import call, reply
from harness.tools import llm_tool


@llm_tool
def lookup_order(order: str) -> str:
    """Look an order up."""
    return f"order {order}: paid"


@llm_tool
def refund_order(order: str) -> str:
    """Refund an order."""
    return f"order {order}: refunded"


class RefundAfterLookup(InjectionStrategy):
    """Injects ``refund_order`` after ``lookup_order`` succeeded (an edit: the delivery
    around it decides how it reaches the model)."""

    @property
    def name(self) -> str:
        return "refunds"

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        if context.call is None or context.call.name != "lookup_order":
            return None
        if "refund_order" in context.offered:
            return None
        return ToolsetChange(add=(refund_order,), reason="refunds unlocked")


def _script() -> ScriptedModel:
    return ScriptedModel(
        [
            call("lookup_order", {"order": "A-1"}),
            call("refund_order", {"order": "A-1"}),
            reply("Refunded."),
        ]
    )


Build = Callable[[OpenAIWireTransport, bool], Model]
ADAPTERS: dict[str, Build] = {
    "responses": lambda t, s: OpenAIResponsesModel(fake_openai_client(t), "gpt-test", stream=s),
    "anthropic": lambda t, s: AnthropicModel(fake_anthropic_client(t), "claude-test", stream=s),
}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("provider", sorted(ADAPTERS))
def test_an_addition_reaches_the_model_without_editing_tools(provider: str, stream: bool) -> None:
    transport = OpenAIWireTransport(_script())
    model = ADAPTERS[provider](transport, stream)
    result = run(
        model, "Refund A-1.", tools=[lookup_order], strategies=[AddTools(RefundAfterLookup())]
    )
    assert result.output == "Refunded."
    assert injected("refund_order", via="addition", at=1).evaluate(result.trace) is None
    bodies = [r.body for r in transport.app.requests]
    assert len(bodies) == 3
    if provider == "responses":
        # tools never changes; an additional_tools item carries the definition
        assert all([t["name"] for t in b["tools"]] == ["lookup_order"] for b in bodies)
        items = [i for i in bodies[1]["input"] if i.get("type") == "additional_tools"]
        assert [t["name"] for i in items for t in i["tools"]] == ["refund_order"]
        assert items[0]["role"] == "developer"
    else:
        # the added tool is declared deferred at the end (outside the cached prefix) and a
        # role "system" message of tool_addition blocks references it
        prefix = [t for t in bodies[1]["tools"] if not t.get("defer_loading")]
        assert prefix == bodies[0]["tools"]
        assert bodies[1]["tools"][-1]["name"] == "refund_order"
        assert bodies[1]["tools"][-1]["defer_loading"] is True
        system = [m for m in bodies[1]["messages"] if m["role"] == "system"]
        assert system == [
            {
                "role": "system",
                "content": [
                    {
                        "type": "tool_addition",
                        "tool": {"type": "tool_reference", "name": "refund_order"},
                    }
                ],
            }
        ]
        # the SDK call names the beta the construct needs (the fake keeps no headers)
        assert anthropic_messages.required_betas(bodies[1]) == [
            anthropic_messages.BETAS["tool_addition"]
        ]


def test_chat_completions_has_no_additions_so_the_delivery_edits_tools() -> None:
    transport = OpenAIWireTransport(_script())
    model = OpenAIChatModel(fake_openai_client(transport), "gpt-test")
    result = run(
        model, "Refund A-1.", tools=[lookup_order], strategies=[AddTools(RefundAfterLookup())]
    )
    assert injected("refund_order", via="edit", at=1).evaluate(result.trace) is None
    failure = injected("refund_order", via="addition").evaluate(result.trace)
    assert failure is not None and "via 'edit'" in failure.problem
    tools = [[t["function"]["name"] for t in r.body["tools"]] for r in transport.app.requests]
    assert tools == [["lookup_order"], ["lookup_order", "refund_order"]] * 1 + [
        ["lookup_order", "refund_order"]
    ]


def test_native_always_refuses_a_model_without_additions_with_the_trace_so_far() -> None:
    model = OpenAIChatModel(fake_openai_client(_script()), "gpt-test")
    strategy = AddTools(RefundAfterLookup(), native="always")
    with pytest.raises(UsageError, match="tool_additions is false") as info:
        run(model, "Refund A-1.", tools=[lookup_order], strategies=[strategy])
    assert "native='auto'" in str(info.value)  # the fix
    assert [c.name for c in info.value.trace.calls] == ["lookup_order"]


def test_a_strategy_delivering_by_addition_on_a_model_without_them_is_a_strategy_error() -> None:
    class Raw(InjectionStrategy):
        def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
            return ToolsetChange(add=(refund_order,), via="addition")

    model = OpenAIChatModel(fake_openai_client(_script()), "gpt-test")
    with pytest.raises(StrategyError, match=r"capabilities\.tool_additions is false.*Delivery"):
        run(model, "Refund A-1.", tools=[lookup_order], strategies=[Raw()])


def test_entity_discovery_by_addition_through_responses() -> None:
    from fixtures.customers import search_customer

    script = ScriptedModel(
        [
            call("search_customer", {"name": "John Smith"}),
            call("customer_c123_get_average_spend"),
            reply("42."),
        ]
    )
    transport = OpenAIWireTransport(script)
    model = OpenAIResponsesModel(fake_openai_client(transport), "gpt-test")
    strategy = EntityDiscovery(via=Delivery("addition", native="always"))
    result = run(model, "Spend?", tools=[search_customer], strategies=[strategy])
    assert injected("customer_c123_*", via="addition", at=1).evaluate(result.trace) is None
    assert all(len(r.body["tools"]) == 1 for r in transport.app.requests)


# -- the providers' 400s, through the real SDKs ------------------------------------------

REFUND = {
    "type": "function",
    "name": "refund_order",
    "parameters": {"type": "object", "properties": {"order": {"type": "string"}}},
}
LOOKUP = {**REFUND, "name": "lookup_order"}


def _responses_input(*, added_first: bool) -> list[dict[str, Any]]:
    addition = {"type": "additional_tools", "role": "developer", "tools": [REFUND]}
    refund_call = [
        {"type": "function_call", "call_id": "c2", "name": "refund_order", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c2", "output": "refunded"},
    ]
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Refund A-1."},
        {"type": "function_call", "call_id": "c1", "name": "lookup_order", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "paid"},
    ]
    return [*history, addition, *refund_call] if added_first else [*history, *refund_call, addition]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_responses_takes_a_call_after_its_addition_and_refuses_one_before(stream: bool) -> None:
    client = fake_openai_client(ScriptedModel([reply("ok")]))
    made = client.responses.create(
        model="gpt-test", input=_responses_input(added_first=True), tools=[LOOKUP], stream=stream
    )
    if stream:
        assert any(e.type == "response.completed" for e in made)
    else:
        assert made.output_text == "ok"
    client = fake_openai_client(ScriptedModel([reply("ok")]))
    with pytest.raises(openai.BadRequestError) as info:
        client.responses.create(
            model="gpt-test",
            input=_responses_input(added_first=False),
            tools=[LOOKUP],
            stream=stream,
        )
    error = info.value.body
    assert info.value.status_code == 400
    assert error["type"] == "invalid_request_error" and error["code"] == "invalid_value"  # type: ignore[index]
    assert "before the addition" in str(error)


def _anthropic_messages(*, added_first: bool, name: str = "refund_order") -> list[dict[str, Any]]:
    addition = {
        "role": "system",
        "content": [{"type": "tool_addition", "tool": {"type": "tool_reference", "name": name}}],
    }
    use = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t2", "name": "refund_order", "input": {}}],
    }
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "ok"}],
    }
    history = [
        {"role": "user", "content": "Refund A-1."},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "lookup_order", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "paid"}],
        },
    ]
    return [*history, addition, use, result] if added_first else [*history, use, result, addition]


ANTHROPIC_TOOLS = [
    {"name": "lookup_order", "input_schema": {"type": "object", "properties": {}}},
    {
        "name": "refund_order",
        "input_schema": {"type": "object", "properties": {}},
        "defer_loading": True,
    },
]


def _anthropic(messages: list[dict[str, Any]], stream: bool) -> Any:
    client = fake_anthropic_client(ScriptedModel([reply("ok")]))
    if stream:
        with client.messages.stream(
            model="claude-test", max_tokens=50, messages=messages, tools=ANTHROPIC_TOOLS
        ) as events:
            return events.get_final_message()
    return client.messages.create(
        model="claude-test", max_tokens=50, messages=messages, tools=ANTHROPIC_TOOLS
    )


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_anthropic_takes_a_call_after_its_addition_and_refuses_one_before(stream: bool) -> None:
    made = _anthropic(_anthropic_messages(added_first=True), stream)
    assert made.content[0].text == "ok"
    with pytest.raises(anthropic.BadRequestError) as info:
        _anthropic(_anthropic_messages(added_first=False), stream)
    assert info.value.status_code == 400
    assert info.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    assert "refund_order" in str(info.value)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_anthropic_refuses_an_addition_of_a_tool_nobody_defined(stream: bool) -> None:
    messages = _anthropic_messages(added_first=True, name="undefined_tool")
    with pytest.raises(anthropic.BadRequestError) as info:
        _anthropic(messages, stream)
    assert "Tool reference 'undefined_tool' not found in available tools" in str(info.value)


def test_responses_refuses_an_addition_that_is_not_a_list_of_tools() -> None:
    client = fake_openai_client(ScriptedModel([reply("ok")]))
    bad = [
        {"role": "user", "content": "hi"},
        {"type": "additional_tools", "role": "developer", "tools": [{"type": "function"}]},
    ]
    with pytest.raises(openai.BadRequestError) as info:
        client.responses.create(model="gpt-test", input=bad, tools=[LOOKUP])
    assert info.value.status_code == 400
    assert "name" in json.dumps(info.value.body)
