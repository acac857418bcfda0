"""The three attribute flavours, and how spans group into conversations."""

from __future__ import annotations

import json
from typing import Any

import pytest
from otlp_doc import document, span

from harness.traces import otel_conversations, trace_from_otel
from harness.traces._show import otel_show_data

USER = {"role": "user", "parts": [{"type": "text", "content": "Find John."}]}


def _genai(
    number: int,
    inputs: list[Any],
    output: list[Any],
    tools: list[Any] | None,
    parent: int | None = None,
    **more: Any,
) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.provider.name": "openai",
        "gen_ai.input.messages": json.dumps(inputs),
        "gen_ai.output.messages": json.dumps(output),
        **more,
    }
    if tools is not None:
        attributes["gen_ai.tool.definitions"] = json.dumps(tools)
    return span(number, "chat m", attributes, parent=parent)


def _call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


SEARCH = {"type": "function", "name": "search", "parameters": {"type": "object"}}
SPEND = {"type": "function", "function": {"name": "spend", "parameters": {"type": "object"}}}
ANTHROPIC_SPEND = {"name": "spend", "input_schema": {"type": "object"}}


@pytest.mark.parametrize("arguments", [{"q": "John"}, '{"q": "John"}'])
@pytest.mark.parametrize("result_key", ["response", "result"])
@pytest.mark.parametrize("spend", [SPEND, ANTHROPIC_SPEND, {**SEARCH, "name": "spend"}])
def test_current_genai_in_its_variants(arguments: Any, result_key: str, spend: Any) -> None:
    answer = {"role": "assistant", "parts": [_call("c1", "search", arguments)]}
    result = {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "c1", result_key: "c-9"}],
    }
    text = {
        "role": "assistant",
        "parts": [{"type": "text", "content": "Done."}],
        "finish_reason": "stop",
    }
    trace = trace_from_otel(
        document(
            _genai(1, [USER], [answer], [SEARCH]),
            _genai(2, [USER, answer, result], [text], [SEARCH, spend]),
        )
    )
    first, second = trace.iterations
    assert first.offered == ("search",) and second.offered == ("search", "spend")
    assert first.calls[0].args == {"q": "John"} and first.calls[0].content == "c-9"
    assert first.injected == ("spend",)
    assert second.answer == "Done." and second.calls == ()


def test_definitions_not_recorded_are_unknown_not_empty() -> None:
    answer = {"role": "assistant", "parts": [_call("c1", "search", {})]}
    data = otel_show_data(document(_genai(1, [USER], [answer], None)))
    (request,) = data["conversations"][0]["requests"]
    assert request["tools"] is None
    assert request["missing"][0] == "tool definitions"
    assert request["response"]["calls"] == ["search"]


def test_openllmetry_flat_attributes() -> None:
    flat = {
        "llm.request.type": "chat",
        "gen_ai.system": "OpenAI",
        "gen_ai.request.model": "m",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "Find John.",
        "gen_ai.prompt.1.role": "assistant",
        "gen_ai.prompt.1.tool_calls.0.id": "c1",
        "gen_ai.prompt.1.tool_calls.0.name": "search",
        "gen_ai.prompt.1.tool_calls.0.arguments": '{"q": "John"}',
        "gen_ai.prompt.2.role": "tool",
        "gen_ai.prompt.2.tool_call_id": "c1",
        "gen_ai.prompt.2.content": "c-9",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "Done.",
        "gen_ai.completion.0.finish_reason": "stop",
        "llm.request.functions.0.name": "search",
        "llm.request.functions.0.parameters": '{"type": "object"}',
    }
    (conversation,) = otel_conversations(document(span(1, "openai.chat", flat)))
    request = conversation.requests[0]
    assert request.flavour == "openllmetry" and request.provider == "openai"
    assert [t.name for t in request.tools or ()] == ["search"]
    assert [type(m).__name__ for m in request.messages or ()] == [
        "UserMessage",
        "AssistantMessage",
        "ToolMessage",
    ]
    assert conversation.trace().iterations[0].answer == "Done."


def test_openinference_with_arguments_left_out_when_empty() -> None:
    attributes = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "m",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Find John.",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "list_all",
        "llm.tools.0.tool.json_schema": json.dumps(ANTHROPIC_SPEND | {"name": "list_all"}),
        "llm.invocation_parameters": json.dumps({"tool_choice": "required"}),
    }
    tool = {"openinference.span.kind": "TOOL", "tool.name": "list_all", "output.value": "[]"}
    agent = {"openinference.span.kind": "AGENT", "agent.name": "crm"}
    trace = trace_from_otel(
        document(
            span(1, "crm", agent),
            span(2, "llm", attributes, parent=1),
            span(3, "t", tool, parent=1),
        )
    )
    (it,) = trace.iterations
    assert it.offered == ("list_all",)
    assert it.calls[0].arguments == "{}" and it.calls[0].content == "[]"
    assert it.tool_choice is None and it.tools is not None
    assert it.tools.tool_choice is not None and it.tools.tool_choice.mode == "required"


def test_stacked_spans_of_one_request_count_once() -> None:
    answer = {"role": "assistant", "parts": [_call("c1", "search", {})]}
    outer = _genai(1, [USER], [answer], [SEARCH])
    inner = span(
        2, "ChatCompletion", {"openinference.span.kind": "LLM", "llm.model_name": "m"}, parent=1
    )
    (conversation,) = otel_conversations(document(outer, inner))
    assert len(conversation.requests) == 1
    siblings = document(
        _genai(1, [USER], [answer], [SEARCH], **{"gen_ai.response.id": "r1"}),
        _genai(3, [USER], [answer], None, **{"gen_ai.response.id": "r1"}),
    )
    (conversation,) = otel_conversations(siblings)
    assert len(conversation.requests) == 1


def test_traces_and_agent_spans_are_conversations() -> None:
    answer = {"role": "assistant", "parts": [{"type": "text", "content": "Hi."}]}
    other = "1" * 32
    found = otel_conversations(
        document(
            _genai(1, [USER], [answer], [SEARCH]),
            {**_genai(2, [USER], [answer], [SEARCH]), "traceId": other},
        )
    )
    assert [c.trace_id for c in found] == ["0af7651916cd43dd8448eb211c80319c", other]
    agent = {"gen_ai.operation.name": "invoke_agent"}
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "ask",
        "gen_ai.tool.call.id": "c7",
    }
    nested = document(
        span(1, "invoke_agent a", agent),
        _genai(2, [USER], [answer], [SEARCH], parent=1),
        span(3, "execute_tool ask", tool, parent=1),
        span(4, "invoke_agent b", agent, parent=3),
        _genai(5, [USER], [answer], [SEARCH], parent=4),
    )
    outer, inner = otel_conversations(nested)
    assert inner.parent is outer and inner.parent_call == "c7"
    assert trace_from_otel(nested) == outer.trace()  # the nested run is not a second pick


def test_sdk_spans_and_json_lines(tmp_path: Any) -> None:
    answer = {"role": "assistant", "parts": [{"type": "text", "content": "Hi."}]}
    path = tmp_path / "t.jsonl"
    one = document(_genai(1, [USER], [answer], [SEARCH]))
    two = document({**_genai(2, [USER], [answer], [SEARCH]), "traceId": "2" * 32})
    path.write_text(json.dumps(one) + "\n\n" + json.dumps(two) + "\n", encoding="utf-8")
    assert len(otel_conversations(path)) == 2
    assert len(otel_conversations([one, two])) == 2


def test_usage_per_model_in_each_flavour() -> None:
    answer = {"role": "assistant", "parts": [{"type": "text", "content": "Hi."}]}
    usage = {"gen_ai.usage.input_tokens": 12, "gen_ai.usage.output_tokens": 3}
    usage["gen_ai.usage.cache_read.input_tokens"] = 4
    trace = trace_from_otel(document(_genai(1, [USER], [answer], [SEARCH], **usage)))
    found = trace.usage["m"]
    assert (found.input_tokens, found.output_tokens, found.cache_read_tokens) == (12, 3, 4)
    flat = {
        "llm.request.type": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.completion.0.content": "x",
    }
    flat |= {"gen_ai.usage.prompt_tokens": 7, "gen_ai.usage.cache_read_input_tokens": 2}
    assert trace_from_otel(document(span(1, "openai.chat", flat))).usage["m"].cache_read_tokens == 2
