"""The Anthropic Messages format (``harness.formats.anthropic_messages``): neutral <->
request and response bodies, streamed and not."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st
from wire_helpers import DEFINITIONS, KINDS, TIME, TOOLS, WEATHER, model_request, usage

from harness._errors import ProviderError
from harness.formats import IdSource, WireRequest
from harness.formats._json import SSEEvent, sse, sse_data
from harness.formats.anthropic_messages import (
    message_key,
    read_request as request_from_body,
    request_body as messages_params,
    response_body,
    response_events,
    response_from_body as response_from_message,
    response_from_events,
    response_from_sse,
    thinking_blocks,
    tool_choice_param as choice_param,
)
from harness.loop import ModelResponse, ModelSettings, Usage
from harness.messages import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from harness.tools import ToolChoice


def _wire(model: str) -> WireRequest:
    return WireRequest(model=model, request=model_request())


def message_body(response: ModelResponse, *, model: str) -> dict[str, object]:
    """The fake's JSON for ``response``."""
    return response_body(_wire(model), response, IdSource())


def message_events(response: ModelResponse, *, model: str, chunk_chars: int = 8) -> list[SSEEvent]:
    """The fake's events for ``response``."""
    return response_events(_wire(model), response, IdSource(), chunk_chars=chunk_chars)


def tool_choice_param(settings: ModelSettings) -> object:
    return choice_param(settings.tool_choice, parallel_tool_calls=settings.parallel_tool_calls)


def sse_events(text: str) -> list[object]:
    return sse_data(text)


HISTORY = [
    SystemMessage(content="Be brief."),
    UserMessage(content="Weather and time in Paris?"),
    AssistantMessage(content="Let me check.", tool_calls=(WEATHER, TIME)),
    ToolMessage(tool_call_id="call_a", content="21C"),
    ToolMessage(tool_call_id="call_b", content="12:00", is_error=True),
    UserMessage(content="And tomorrow?"),
]


def test_history_becomes_system_and_alternating_messages_with_blocks() -> None:
    params = messages_params(model_request(HISTORY), model="claude-x", max_tokens=99)
    assert params["system"] == "Be brief."
    assert params["max_tokens"] == 99
    assert [m["role"] for m in params["messages"]] == ["user", "assistant", "user"]
    assistant = params["messages"][1]["content"]
    assert assistant[0] == {"type": "text", "text": "Let me check."}
    assert assistant[1] == {
        "type": "tool_use",
        "id": "call_a",
        "name": "get_weather",
        "input": {"city": "Paris"},
    }
    results = params["messages"][2]["content"]
    # parallel results first, in call order, then the user's text (the API's rule)
    assert [b["type"] for b in results] == ["tool_result", "tool_result", "text"]
    assert results[0] == {"type": "tool_result", "tool_use_id": "call_a", "content": "21C"}
    assert results[1] == {
        "type": "tool_result",
        "tool_use_id": "call_b",
        "content": "12:00",
        "is_error": True,
    }
    assert params["tools"][0] == {
        "name": "get_weather",
        "description": "Weather of a city.",
        "input_schema": TOOLS[0]["function"]["parameters"],
    }
    assert "stream" not in params


def test_no_tools_means_no_tools_and_no_tool_choice() -> None:
    request = model_request(tools=[], settings=ModelSettings(tool_choice="required"))
    params = messages_params(request, model="m", stream=True)
    assert "tools" not in params and "tool_choice" not in params
    assert params["stream"] is True
    assert params["messages"] == [{"role": "user", "content": "What's the weather in Paris?"}]


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        ("auto", None, {"type": "auto"}),
        ("required", None, {"type": "any"}),
        ("none", None, {"type": "none"}),
        ("get_time", None, {"type": "tool", "name": "get_time"}),
        (ToolChoice.tool("get_time"), None, {"type": "tool", "name": "get_time"}),
        (ToolChoice.required(), False, {"type": "any", "disable_parallel_tool_use": True}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("none", False, {"type": "none"}),
        (None, None, None),
    ],
)
def test_tool_choice_and_parallel_setting(
    choice: object, parallel: object, expected: object
) -> None:
    settings = ModelSettings(tool_choice=choice, parallel_tool_calls=parallel)  # type: ignore[arg-type]
    assert tool_choice_param(settings) == expected


def test_defaults_then_extra_override_and_malformed_arguments_survive() -> None:
    bad = ToolCall(id="c1", name="get_time", arguments="{not json")
    request = model_request(
        [
            UserMessage(content="hi"),
            AssistantMessage(tool_calls=(bad,)),
            ToolMessage(tool_call_id="c1", content="x"),
        ],
        settings=ModelSettings(extra={"temperature": 0.5}),
    )
    params = messages_params(request, model="m", defaults={"temperature": 1.0, "top_k": 5})
    assert params["temperature"] == 0.5 and params["top_k"] == 5
    assert params["messages"][1]["content"][0]["input"] == {"_raw_arguments": "{not json"}


def test_thinking_blocks_are_sent_back_in_place_unchanged() -> None:
    turn = AssistantMessage(tool_calls=(WEATHER,))
    thought = {"type": "thinking", "thinking": "hmm", "signature": "sig=="}
    request = model_request(
        [UserMessage(content="q"), turn, ToolMessage(tool_call_id="call_a", content="21C")]
    )
    params = messages_params(request, model="m", thinking={message_key(turn): [thought]})
    assert params["messages"][1]["content"][0] == thought
    assert params["messages"][1]["content"][1]["type"] == "tool_use"


def test_request_body_reads_back_to_the_neutral_request() -> None:
    request = model_request(
        HISTORY, settings=ModelSettings(tool_choice="get_time", parallel_tool_calls=False)
    )
    back = request_from_body(messages_params(request, model="m"))
    assert list(back.messages) == HISTORY
    assert back.tool_names == ("get_weather", "get_time")
    assert list(back.tools) == DEFINITIONS
    assert back.settings.tool_choice == ToolChoice.tool("get_time")
    assert back.settings.parallel_tool_calls is False
    assert back.settings.extra == {}
    assert back.iteration == 2


def test_request_body_with_list_system_and_rich_tool_results() -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "system": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "image", "source": {}}, {"type": "text", "text": "see"}],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "t", "signature": "s"},
                    {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "is_error": True,
                        "content": [{"type": "text", "text": "boom"}],
                    }
                ],
            },
        ],
        "tools": [
            {"type": "web_search_20250305", "name": "web_search"},
            {"name": "f", "input_schema": {"type": "object"}},
        ],
        "temperature": 0.1,
    }
    back = request_from_body(body)
    assert back.messages[0] == SystemMessage(content="A\nB")
    assert back.messages[1] == UserMessage(content="[image]\nsee")
    assert back.messages[2] == AssistantMessage(
        tool_calls=(ToolCall(id="t1", name="f", arguments='{"a": 1}'),)
    )
    assert back.messages[3] == ToolMessage(tool_call_id="t1", content="boom", is_error=True)
    assert back.tool_names == ("f",)  # server tools are the API's, not the loop's
    assert back.settings.extra == {"temperature": 0.1}


def _message(
    content: list[dict[str, object]], stop: str = "end_turn", **usage_extra: int
) -> dict[str, object]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5, **usage_extra},
    }


def test_response_text_tools_stop_reasons_and_cache_usage() -> None:
    data = _message(
        [
            {"type": "thinking", "thinking": "plan", "signature": "s"},
            {"type": "text", "text": "Checking "},
            {"type": "text", "text": "both."},
            {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "t2", "name": "get_time", "input": {}},
        ],
        "tool_use",
        cache_read_input_tokens=100,
        cache_creation_input_tokens=7,
    )
    response = response_from_message(data)
    assert response.message.content == "Checking both."
    assert [c.name for c in response.message.tool_calls] == ["get_weather", "get_time"]
    assert response.message.tool_calls[1].arguments == "{}"
    assert response.finish_reason == "tool_calls"
    assert response.model_name == "claude-x"
    assert response.usage == Usage(
        input_tokens=117,
        output_tokens=5,
        total_tokens=122,
        cache_read_tokens=100,
        cache_write_tokens=7,
    )
    assert thinking_blocks(data) == [{"type": "thinking", "thinking": "plan", "signature": "s"}]


@pytest.mark.parametrize(
    ("stop", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("refusal", "content_filter"),
        ("tool_use", "tool_calls"),
    ],
)
def test_stop_reasons(stop: str, finish: str) -> None:
    response = response_from_message(_message([{"type": "text", "text": "x"}], stop))
    assert response.finish_reason == finish
    if stop == "refusal":
        assert response.message.refusal == "x" and response.message.content is None


def test_not_a_message_is_a_clear_provider_error() -> None:
    with pytest.raises(ProviderError, match="expected an Anthropic message"):
        response_from_message({"type": "error", "error": {}})


def test_stream_error_event_and_empty_stream_are_provider_errors() -> None:
    with pytest.raises(ProviderError, match="overloaded_error") as info:
        response_from_events(
            [{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}]
        )
    assert info.value.retryable is True
    with pytest.raises(ProviderError, match="message_start"):
        response_from_events([{"type": "ping"}])


RESPONSES = {
    **KINDS,
    "refusal": ModelResponse(
        message=AssistantMessage(refusal="No."), finish_reason="content_filter", usage=usage(3, 1)
    ),
}
RESPONSES.pop("content_filter")  # an empty filtered answer has no Anthropic form


@pytest.mark.parametrize("kind", sorted(RESPONSES))
def test_rendered_json_and_sse_read_back_to_the_same_response(kind: str) -> None:
    response = RESPONSES[kind]
    body = message_body(response, model="claude-x")
    events = message_events(response, model="claude-x", chunk_chars=3)
    text = b"".join(sse(data, event=name) for name, data in events)
    expected = ModelResponse(
        message=response.message,
        finish_reason="tool_calls" if response.message.tool_calls else response.finish_reason,
        usage=response.usage if response.usage.total_tokens else Usage(),
        model_name="claude-x",
    )
    assert response_from_message(body) == expected
    assert response_from_sse(text) == expected
    assert response_from_message(json.loads(json.dumps(body))) == expected


def test_sse_has_the_apis_event_order_with_a_ping_and_json_fragments() -> None:
    events = message_events(KINDS["text_and_call"], model="m", chunk_chars=4)
    names = [name for name, _ in events]
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 2
    deltas = [d["delta"] for n, d in events if n == "content_block_delta"]
    fragments = [d["partial_json"] for d in deltas if d["type"] == "input_json_delta"]
    assert fragments[0] == "" and len(fragments) > 2 and "".join(fragments) == '{"city": "Paris"}'
    assert "".join(d["text"] for d in deltas if d["type"] == "text_delta") == "Let me check."
    start = events[0][1]["message"]
    assert start["content"] == [] and start["stop_reason"] is None
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_sse_parser_handles_padding_pings_and_comments() -> None:
    start = {"type": "message_start", "message": _message([], stop=None)}  # type: ignore[arg-type]
    use = {"type": "tool_use", "id": "t", "name": "f", "input": {}}
    block = {"type": "content_block_start", "index": 0, "content_block": use}
    empty = {"type": "input_json_delta", "partial_json": ""}
    delta = {"type": "content_block_delta", "index": 0, "delta": empty}
    end = {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}
    text = (
        f"event: message_start\ndata: {json.dumps(start)}   \n\n"
        ': a comment\n\nevent: ping\ndata: {"type": "ping"}\n\n'
        f"event: content_block_start\ndata: {json.dumps(block)}\n\n"
        f"event: content_block_delta\ndata: {json.dumps(delta)[:-1]}    }}\n\n"
        'data: {"type":"content_block_stop","index":0}\n\n'
        f"data: {json.dumps({**end, 'usage': {'output_tokens': 9}})}\n\n"
    )
    assert [e["type"] for e in sse_events(text)][:2] == ["message_start", "ping"]
    response = response_from_sse(text.encode())
    assert response.message.tool_calls == (ToolCall(id="t", name="f", arguments="{}"),)
    assert response.usage.output_tokens == 9


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=20)
_ARGS = st.dictionaries(st.text(min_size=1, max_size=5), st.integers() | _TEXT, max_size=3)


@st.composite
def histories(draw: st.DrawFn) -> list[object]:
    """Loop-shaped histories: user, then turns of (calls + their results) or text."""
    messages: list[object] = [UserMessage(content=draw(_TEXT))]
    for turn in range(draw(st.integers(0, 3))):
        n = draw(st.integers(1, 3))
        calls = tuple(
            ToolCall(
                id=f"c{turn}_{i}",
                name=draw(st.sampled_from(["get_weather", "get_time"])),
                arguments=json.dumps(draw(_ARGS)),
            )
            for i in range(n)
        )
        messages.append(AssistantMessage(content=draw(st.none() | _TEXT), tool_calls=calls))
        messages.extend(
            ToolMessage(tool_call_id=c.id, content=draw(_TEXT), is_error=draw(st.booleans()))
            for c in calls
        )
    messages.append(AssistantMessage(content=draw(_TEXT)))
    return messages


@settings(max_examples=60, deadline=None)
@given(histories())
def test_property_request_round_trip(history: list[object]) -> None:
    request = model_request(history)  # type: ignore[arg-type]
    assert list(request_from_body(messages_params(request, model="m")).messages) == history


@settings(max_examples=60, deadline=None)
@given(st.none() | _TEXT, st.lists(_ARGS, max_size=3), st.integers(1, 9))
def test_property_streamed_and_plain_responses_agree(
    text: str | None, args: list[dict[str, object]], size: int
) -> None:
    calls = tuple(
        ToolCall(id=f"t{i}", name="f", arguments=json.dumps(a)) for i, a in enumerate(args)
    )
    response = ModelResponse(
        message=AssistantMessage(content=text, tool_calls=calls), usage=usage(4, 2)
    )
    plain = response_from_message(message_body(response, model="m"))
    events = message_events(response, model="m", chunk_chars=size)
    assert response_from_events(data for _, data in events) == plain
    assert plain.message.content == (text or None)
    assert [json.loads(c.arguments) for c in plain.message.tool_calls] == args
