"""Bedrock Converse, both sides: tool entries and choices, the round trips of generated
requests and answers (JSON, botocore-style events, event-stream bytes), what Converse
cannot say, the event-stream framing checked by botocore's own parser, the prompt pieces
with their ``cachePoint`` breakpoints, and the codecs' routes."""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer
from format_strategies import _ARGUMENTS, _NAMES
from hypothesis import HealthCheck, given, settings, strategies as st

from harness import ToolChoice, ToolDefinition, UsageError
from harness.formats import IdSource, bedrock_converse as bc, codec_for
from harness.loop import ModelRequest, ModelResponse, ModelSettings, Usage
from harness.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}

# Bedrock refuses blank text blocks: generated texts hold a visible character
TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=16
).filter(str.strip)


@st.composite
def histories(draw: st.DrawFn, names: tuple[str, ...]) -> list[Message]:
    """A valid conversation: system prompts, a user turn, rounds of calls answered in
    order (results may be errors, a user turn may follow) or text answers."""
    out: list[Message] = [SystemMessage(content=draw(TEXT)) for _ in range(draw(st.integers(0, 2)))]
    out.append(UserMessage(content=draw(TEXT)))
    ids = iter(range(1000))
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            calls = tuple(
                ToolCall(
                    id=f"tooluse_{next(ids)}",
                    name=draw(st.sampled_from(names)),
                    arguments=draw(_ARGUMENTS),
                )
                for _ in range(draw(st.integers(1, 3)))
            )
            out.append(AssistantMessage(content=draw(st.none() | TEXT), tool_calls=calls))
            out.extend(
                ToolMessage(tool_call_id=c.id, content=draw(TEXT), is_error=draw(st.booleans()))
                for c in calls
            )
            if draw(st.booleans()):
                out.append(UserMessage(content=draw(TEXT)))
        else:
            out.append(AssistantMessage(content=draw(TEXT)))
            out.append(UserMessage(content=draw(TEXT)))
    return out


@st.composite
def requests(draw: st.DrawFn) -> ModelRequest:
    """A request the loop could build, with what Converse carries."""
    names = tuple(draw(st.lists(_NAMES, min_size=1, max_size=4, unique=True)))
    tools = [
        ToolDefinition(
            name=name,
            description=draw(st.none() | TEXT),
            parameters={"type": "object", "properties": {p: {"type": "string"} for p in name[:2]}},
            cache_control=draw(
                st.none()
                | st.sampled_from([{"type": "ephemeral"}, {"type": "ephemeral", "ttl": "1h"}])
            ),
            provider_extra=draw(st.just({}) | st.just({bc.NAME: {"x_extra": 1}})),
        )
        for name in names
    ]
    choice = draw(
        st.none()
        | st.sampled_from([ToolChoice.auto(), ToolChoice.required()])
        | st.sampled_from(names).map(ToolChoice.tool)
    )
    messages = draw(histories(names))
    return ModelRequest(
        messages=messages,
        tools=tools,
        tool_names=names,
        settings=ModelSettings(tool_choice=choice),
        iteration=1 + sum(isinstance(m, AssistantMessage) for m in messages),
    )


@st.composite
def responses(draw: st.DrawFn) -> ModelResponse:
    calls = tuple(
        ToolCall(id=f"tooluse_{i}", name=draw(_NAMES), arguments=draw(_ARGUMENTS))
        for i in range(draw(st.integers(0, 3)))
    )
    content = draw(st.none() | TEXT) if calls else draw(TEXT)
    finish = "tool_calls" if calls else draw(st.sampled_from(["stop", "length"]))
    read, write = draw(st.integers(0, 100)), draw(st.integers(0, 100))
    inputs, outputs = read + write + draw(st.integers(0, 500)), draw(st.integers(0, 500))
    return ModelResponse(
        message=AssistantMessage(content=content, tool_calls=calls),
        finish_reason=finish,
        usage=Usage(
            input_tokens=inputs,
            output_tokens=outputs,
            total_tokens=inputs + outputs,
            cache_read_tokens=read,
            cache_write_tokens=write,
        ),
    )


def _wire(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _botocore_frames(data: bytes) -> list[tuple[dict[str, Any], bytes]]:
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(dict(m.headers), m.payload) for m in buffer]


# -- the round trips -----------------------------------------------------------------------


@SETTINGS
@given(request=requests())
def test_a_request_reads_back_to_the_request(request: ModelRequest) -> None:
    body = _wire(bc.request_body(request, model="anthropic.claude-x:0"))
    back = bc.request_from_body(body)  # the fake's reading, with the API's checks
    assert back.model == "anthropic.claude-x:0"
    assert list(back.request.messages) == list(request.messages)
    assert list(back.request.tools) == list(request.tools)
    assert back.request.settings.tool_choice == request.settings.tool_choice
    parsed = bc.CODEC.parse_request({k: v for k, v in body.items() if k != "modelId"})
    assert list(parsed.messages) == list(request.messages)  # a recording of it
    assert list(parsed.tools) == list(request.tools)
    assert parsed.tool_choice == request.settings.tool_choice


@SETTINGS
@given(data=st.data(), chunk_chars=st.integers(1, 9), max_chunks=st.integers(1, 64))
def test_what_the_fake_serves_reads_back_to_the_answer(
    data: st.DataObject, chunk_chars: int, max_chunks: int
) -> None:
    response: ModelResponse = data.draw(responses())
    wire = bc.request_from_body(_wire(bc.request_body(data.draw(requests()), model="m")))
    assert bc.response_from_body(_wire(bc.response_body(wire, response, IdSource()))) == response
    events = bc.response_events(
        wire, response, IdSource(), chunk_chars=chunk_chars, max_chunks=max_chunks
    )
    pairs = [(name, _wire(payload)) for name, payload in events]
    assert bc.response_from_events(pairs) == response
    parsed = [{name: payload} for name, payload in pairs]  # what botocore yields
    assert bc.response_from_events(parsed) == response
    content_type, frames = bc.stream_frames(events)
    raw = b"".join(frames)
    assert content_type == "application/vnd.amazon.eventstream"
    assert bc.response_from_sse(raw) == response
    assert bc.response_from_sse(base64.b64encode(raw).decode()) == response
    assert bc.CODEC.decode_response(200, {}, raw) == response  # known by its first frame
    assert bc.CODEC.decode_response(200, {}, base64.encodebytes(raw)) == response


def test_every_frame_the_fake_writes_passes_botocores_crc_checks() -> None:
    events = [("messageStart", {"role": "assistant"}), ("messageStop", {"stopReason": "end_turn"})]
    _, frames = bc.stream_frames(events)
    read = _botocore_frames(b"".join(frames))
    assert [h[":event-type"] for h, _ in read] == ["messageStart", "messageStop"]
    assert {h[":message-type"] for h, _ in read} == {"event"}
    assert [json.loads(p) for _, p in read] == [d for _, d in events]
    error = _botocore_frames(bc.exception_frame("throttlingException", "slow down"))
    assert error[0][0][":exception-type"] == "throttlingException"


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda raw: raw[:-3], r"byte\(s\) after the last whole frame"),
        (lambda raw: raw[:20] + bytes([raw[20] ^ 1]) + raw[21:], "ChecksumMismatch"),
    ],
    ids=["cut short", "flipped bit"],
)
def test_a_damaged_event_stream_is_a_malformed_response(damage: Any, said: str) -> None:
    from harness import MalformedResponse

    _, frames = bc.stream_frames([("messageStart", {"role": "assistant"})])
    with pytest.raises(MalformedResponse, match=said):
        bc.read_frames(damage(b"".join(frames)))


def test_a_stream_exception_frame_raises_its_provider_error() -> None:
    from harness import RateLimited

    _, frames = bc.stream_frames([("messageStart", {"role": "assistant"})])
    raw = b"".join(frames) + bc.exception_frame("throttlingException", "Too many tokens")
    with pytest.raises(RateLimited, match="Too many tokens") as info:
        bc.response_from_sse(raw)
    assert info.value.status == 429 and info.value.retryable is True


# -- pieces, both ways ---------------------------------------------------------------------


def test_tool_entry_and_its_cache_point() -> None:
    tool = ToolDefinition(
        name="get_weather",
        description="Weather.",
        parameters=SCHEMA,
        cache_control={"type": "ephemeral"},
    )
    assert bc.tool_param(tool) == {
        "toolSpec": {
            "name": "get_weather",
            "description": "Weather.",
            "inputSchema": {"json": SCHEMA},
        }
    }
    request = ModelRequest(
        messages=[UserMessage(content="hi")],
        tools=[tool, ToolDefinition(name="g")],
        tool_names=("get_weather", "g"),
        settings=ModelSettings(tool_choice=ToolChoice.tool("g")),
        iteration=1,
    )
    config = bc.request_body(request, model="m")["toolConfig"]
    assert config["tools"][1] == {"cachePoint": {"type": "default"}}
    assert config["toolChoice"] == {"tool": {"name": "g"}}
    read = bc.request_from_body(
        {"messages": [{"role": "user", "content": [{"text": "hi"}]}], "toolConfig": config}
    )
    assert list(read.request.tools) == [tool, ToolDefinition(name="g")]


@pytest.mark.parametrize(
    ("param", "choice"),
    [
        ({"auto": {}}, ToolChoice.auto()),
        ({"any": {}}, ToolChoice.required()),
        ({"tool": {"name": "f"}}, ToolChoice.tool("f")),
    ],
)
def test_tool_choice_both_ways(param: dict[str, Any], choice: ToolChoice) -> None:
    assert bc.tool_choice_param(choice) == param
    assert bc.tool_choice_from_param(param) == choice


def test_an_unknown_tool_choice_member_is_kept_for_the_way_back() -> None:
    choice = bc.tool_choice_from_param({"someday": {"x": 1}})
    assert choice is not None and bc.tool_choice_param(choice) == {"someday": {"x": 1}}


@pytest.mark.parametrize(
    ("tool", "said"),
    [
        (ToolDefinition(name="f", namespace="crm"), "namespace='crm'"),
        (ToolDefinition(name="f", search="bm25"), "search='bm25'"),
    ],
)
def test_what_converse_cannot_send_is_refused(tool: ToolDefinition, said: str) -> None:
    with pytest.raises(UsageError, match=f"{said}, which Bedrock Converse cannot send"):
        bc.tool_param(tool)


def test_an_allowed_subset_is_refused() -> None:
    with pytest.raises(UsageError, match="Bedrock Converse cannot say"):
        bc.tool_choice_param(ToolChoice.allowed_tools(["f"], mode="required"))


def test_tool_choice_none_leaves_the_tools_out_until_the_history_has_tool_blocks() -> None:
    tools = [ToolDefinition(name="f")]
    fresh = ModelRequest(
        messages=[UserMessage(content="hi")],
        tools=tools,
        tool_names=("f",),
        settings=ModelSettings(tool_choice=ToolChoice.none()),
        iteration=1,
    )
    assert "toolConfig" not in bc.request_body(fresh, model="m")
    history = [
        UserMessage(content="hi"),
        AssistantMessage(tool_calls=(ToolCall(id="t1", name="f"),)),
        ToolMessage(tool_call_id="t1", content="ok"),
    ]
    later = dataclasses.replace(fresh, messages=history)
    with pytest.raises(UsageError, match="no 'none' choice"):
        bc.request_body(later, model="m")


def test_reasoning_blocks_go_back_with_their_turn() -> None:
    answer = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "hm", "signature": "sig"}}},
                    {"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}},
                ],
            }
        },
        "stopReason": "tool_use",
    }
    response = bc.response_from_body(answer)
    blocks = bc.reasoning_blocks(answer)
    request = ModelRequest(
        messages=[
            UserMessage(content="q"),
            response.message,
            ToolMessage(tool_call_id="t1", content="r"),
        ],
        tools=[ToolDefinition(name="f")],
        tool_names=("f",),
        settings=ModelSettings(),
        iteration=2,
    )
    body = bc.request_body(request, model="m", reasoning={bc.message_key(response.message): blocks})
    assert body["messages"][1]["content"][0] == blocks[0]


def test_recorded_bodies_read_leniently() -> None:
    body = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"text": "look"},
                    {"image": {"format": "png"}},
                    {"cachePoint": {"type": "default"}},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {}},
                    {"toolUse": {"toolUseId": "t", "name": "f", "input": {"a": 1}}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "toolResult": {
                            "toolUseId": "t",
                            "content": [{"json": {"ok": True}}, {"text": "done"}],
                        }
                    }
                ],
            },
        ],
        "toolConfig": {
            "tools": [
                {"toolSpec": {"name": "f", "inputSchema": {"json": SCHEMA}}},
                {"systemTool": {"name": "nova_grounding"}},
            ]
        },
    }
    request = bc.read_request(body)
    assert list(request.messages) == [
        UserMessage(content="look"),
        UserMessage(content="[image]"),
        AssistantMessage(tool_calls=(ToolCall(id="t", name="f", arguments='{"a": 1}'),)),
        ToolMessage(tool_call_id="t", content='{"ok": true}\ndone'),
    ]
    assert [t.name for t in request.tools] == ["f"]


# -- the prompt cache's view ---------------------------------------------------------------


def test_cache_points_are_breakpoints_after_the_piece_before_them() -> None:
    body = {
        "toolConfig": {
            "tools": [
                {"toolSpec": {"name": "f", "inputSchema": {"json": SCHEMA}}},
                {"cachePoint": {"type": "default"}},
            ],
            "toolChoice": {"auto": {}},
        },
        "system": [{"text": "rules"}, {"cachePoint": {"type": "default"}}],
        "messages": [
            {"role": "user", "content": [{"text": "hi"}, {"cachePoint": {"type": "default"}}]}
        ],
    }
    pieces = bc.prompt_pieces(body)
    assert [(p.section, p.breakpoint) for p in pieces] == [
        ("tools", True),
        ("system", True),
        ("tool_choice", False),
        ("messages", True),
    ]
    assert all("cachePoint" not in p.text for p in pieces)


@SETTINGS
@given(request=requests())
def test_the_neutral_pieces_are_the_bodys_pieces(request: ModelRequest) -> None:
    body = bc.request_body(request, model="m")
    neutral = [
        *bc.prompt_tools(request.tools),
        *[
            p
            for m in request.messages
            if isinstance(m, SystemMessage)
            for p in bc.prompt_message(m)
        ],
        *bc.prompt_choice(request.settings, request.tools),
        *[
            p
            for m in request.messages
            if not isinstance(m, SystemMessage)
            for p in bc.prompt_message(m)
        ],
    ]
    assert neutral == bc.prompt_pieces(body)


# -- routes and codecs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "model", "operation", "stream"),
    [
        (
            "/model/us.amazon.nova-micro-v1%3A0/converse",
            "us.amazon.nova-micro-v1:0",
            "converse",
            False,
        ),
        ("/model/m/converse-stream", "m", "converse-stream", True),
        (
            "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fp/invoke",
            "arn:aws:bedrock:us-east-1:1:inference-profile/p",
            "invoke",
            False,
        ),
        ("/model/m/invoke-with-response-stream?x=1", "m", "invoke-with-response-stream", True),
    ],
)
def test_the_path_says_the_model_and_the_operation(
    path: str, model: str, operation: str, stream: bool
) -> None:
    route = bc.route_of(path)
    assert route is not None and (route.model, route.operation, route.stream) == (
        model,
        operation,
        stream,
    )
    expected = bc.CODEC if route.converse else bc.INVOKE_CODEC
    assert codec_for("POST", path) is expected
    assert expected.model_of(path) == model
    assert bc.route_of("/v1/messages") is None and codec_for("GET", path) is None


def test_invoke_model_recordings_are_read_by_the_anthropic_codec() -> None:
    from harness.formats import anthropic_messages

    events = [
        {
            "type": "message_start",
            "message": {
                "id": "m",
                "type": "message",
                "role": "assistant",
                "model": "c",
                "content": [],
                "usage": {"input_tokens": 5, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 2},
        },
        {"type": "message_stop"},
    ]
    chunks = [
        ("chunk", {"bytes": base64.b64encode(json.dumps(e).encode()).decode()}) for e in events
    ]
    raw = b"".join(bc.event_frames(chunks))
    expected = anthropic_messages.response_from_events(events)
    assert bc.INVOKE_CODEC.decode_response(200, {"content-type": bc.CONTENT_TYPE}, raw) == expected
    body = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
    }
    assert list(bc.INVOKE_CODEC.parse_request(body).messages) == [UserMessage(content="hi")]
    with pytest.raises(ValueError, match="not an Anthropic Messages body"):
        bc.INVOKE_CODEC.parse_request({"inputText": "titan"})


# -- the fake's reader: a repeated history is read once -------------------------------------


@SETTINGS
@given(request=requests())
def test_the_reader_reads_each_growing_body_as_a_whole_reading_would(request: ModelRequest) -> None:
    """The conversation's bodies one after the other (each repeats the last one's history
    and adds to it), then a body that is not a continuation: one reader gives what a
    fresh reading gives for each."""
    reader = bc.RequestReader()
    body = _wire(bc.request_body(request, model="m"))
    messages = body["messages"]
    for end in [*range(1, len(messages) + 1), 1]:
        grown = {**body, "messages": messages[:end]}
        try:
            expected = bc.request_from_body(grown)
        except bc.ConverseWireError as exc:  # a history cut after a call: refused alike
            with pytest.raises(bc.ConverseWireError, match=re.escape(exc.message)):
                reader.read(grown)
            continue
        assert reader.read(grown).request == expected.request


def test_a_resumed_reading_still_checks_the_turn_after_the_repeated_history() -> None:
    reader = bc.RequestReader()
    user = {"role": "user", "content": [{"text": "q"}]}
    use = {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}],
    }
    config = {"tools": [{"toolSpec": {"name": "f", "inputSchema": {"json": {}}}}]}
    reader.read({"messages": [user, use], "toolConfig": config})
    stray = {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": "t9", "content": [{"text": "r"}]}}],
    }
    with pytest.raises(bc.ConverseWireError, match="for the following Ids: t1"):
        reader.read({"messages": [user, use, stray], "toolConfig": config})
    with pytest.raises(bc.ConverseWireError, match=re.escape(bc.NO_TOOL_CONFIG)):
        reader.read({"messages": [user, use, stray]})  # the tool blocks seen before count
    answer = {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "r"}]}}],
    }
    read = reader.read({"messages": [user, use, answer], "toolConfig": config})
    assert read.request.messages[-1] == ToolMessage(tool_call_id="t1", content="r")
