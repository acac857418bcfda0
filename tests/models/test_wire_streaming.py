"""Streaming from the fake server: SSE exactly like the real APIs, accumulated by the SDK."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import httpx2
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter
from wire_helpers import KINDS, RESPONSES_TOOLS, TOOLS, Canned, model_request

from harness import UsageError
from harness.loop import ModelResponse
from harness.messages import AssistantMessage, ToolCall
from harness.models import (
    FAKE_BASE_URL,
    OpenAIChatModel,
    OpenAIResponsesModel,
    OpenAIWireTransport,
    fake_async_openai_client,
    fake_openai_client,
)

USER = [{"role": "user", "content": "What's the weather in Paris?"}]
EVENT = TypeAdapter(ResponseStreamEvent)


def _raw_events(model: Canned, path: str, body: dict[str, object]) -> list[tuple[str | None, str]]:
    with httpx2.Client(transport=OpenAIWireTransport(model), base_url=FAKE_BASE_URL) as http:
        answer = http.post(path, json=body)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    events = []
    for block in answer.text.split("\n\n"):
        if not block:
            continue
        lines = block.split("\n")
        event = lines[0].removeprefix("event: ") if lines[0].startswith("event: ") else None
        assert lines[-1].startswith("data: "), block
        events.append((event, lines[-1].removeprefix("data: ")))
    assert answer.text.endswith("\n\n")
    return events


def _responses_kind(kind: str) -> ModelResponse:
    if kind == "content_filter":  # an empty text part carries no text on this API
        return dataclasses.replace(KINDS[kind], message=AssistantMessage(content=""))
    return KINDS[kind]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_chat_stream_chunks_are_sdk_chunks_and_accumulate_to_the_response(kind: str) -> None:
    expected = KINDS[kind]
    events = _raw_events(
        Canned(expected),
        "/chat/completions",
        {"model": "m", "messages": USER, "stream": True, "stream_options": {"include_usage": True}},
    )
    assert events[-1] == (None, "[DONE]")
    chunks = [ChatCompletionChunk.model_validate(json.loads(data)) for _, data in events[:-1]]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert all(c.usage is None for c in chunks[:-1])
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == expected.usage.output_tokens
    assert chunks[-2].choices[0].finish_reason == expected.finish_reason
    state: ChatCompletionStreamState[object] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(chunk)
    message = state.current_completion_snapshot.choices[0].message
    assert message.content == expected.message.content
    assert message.refusal == expected.message.refusal
    assert [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []] == [
        (c.id, c.name, c.arguments) for c in expected.message.tool_calls
    ]


def test_tool_call_deltas_carry_index_id_and_argument_fragments() -> None:
    events = _raw_events(
        Canned(KINDS["parallel_calls"]),
        "/chat/completions",
        {"model": "m", "messages": USER, "stream": True},
    )
    deltas = [json.loads(d)["choices"][0]["delta"] for _, d in events[:-1]]
    calls = [c for d in deltas for c in d.get("tool_calls", [])]
    assert deltas[0]["role"] == "assistant"  # the first header rides in the role chunk
    assert deltas[0]["tool_calls"][0]["id"] == "call_a"
    headers = [c for c in calls if "id" in c]
    assert [(h["index"], h["id"], h["function"]["name"]) for h in headers] == [
        (0, "call_a", "get_weather"),
        (1, "call_b", "get_time"),
    ]
    fragments = [c["function"]["arguments"] for c in calls if "id" not in c and c["index"] == 1]
    assert len(fragments) > 3  # streamed in pieces, like the real API
    assert "".join(fragments) == '{"zone": "Europe/Paris", "fmt": "24h"}'
    assert all("usage" not in json.loads(d) for _, d in events[:-1])  # no include_usage


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_chat_adapter_streaming_equals_non_streaming(kind: str) -> None:
    expected = KINDS[kind]
    streamed = OpenAIChatModel(fake_openai_client(Canned(expected)), "m", stream=True)
    plain = OpenAIChatModel(fake_openai_client(Canned(expected)), "m")
    request = model_request()
    assert streamed.request(request) == plain.request(request)


def test_sdk_stream_helper_sees_content_and_tool_events() -> None:
    client = fake_openai_client(Canned(KINDS["text"], KINDS["parallel_calls"]))
    with client.chat.completions.stream(model="m", messages=USER) as stream:  # type: ignore[arg-type]
        kinds = [event.type for event in stream]
        final = stream.get_final_completion()
    assert "content.delta" in kinds and "content.done" in kinds
    assert final.choices[0].message.content == KINDS["text"].message.content
    with client.chat.completions.stream(model="m", messages=USER, tools=TOOLS) as stream:  # type: ignore[arg-type]
        done = [e for e in stream if e.type == "tool_calls.function.arguments.done"]
    assert [(e.name, e.index) for e in done] == [("get_weather", 0), ("get_time", 1)]  # type: ignore[union-attr]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_responses_events_are_sdk_events_with_event_lines(kind: str) -> None:
    expected = _responses_kind(kind)
    events = _raw_events(
        Canned(expected),
        "/responses",
        {"model": "m", "input": "hi", "tools": RESPONSES_TOOLS, "stream": True},
    )
    parsed = [EVENT.validate_python(json.loads(data)) for _, data in events]
    assert [name for name, _ in events] == [e.type for e in parsed]
    assert [e.sequence_number for e in parsed] == list(range(len(parsed)))
    types = [e.type for e in parsed]
    assert types[:2] == ["response.created", "response.in_progress"]
    incomplete = expected.finish_reason in ("length", "content_filter")
    assert types[-1] == ("response.incomplete" if incomplete else "response.completed")
    if expected.message.tool_calls:
        assert "response.function_call_arguments.delta" in types
        assert "response.function_call_arguments.done" in types
    if expected.message.content:
        assert "response.output_text.delta" in types


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_responses_adapter_streaming_equals_non_streaming(kind: str) -> None:
    expected = _responses_kind(kind)
    streamed = OpenAIResponsesModel(fake_openai_client(Canned(expected)), "m", stream=True)
    plain = OpenAIResponsesModel(fake_openai_client(Canned(expected)), "m")
    request = model_request()
    got = streamed.request(request)
    assert got == plain.request(request)
    assert got == dataclasses.replace(expected, model_name="m")


def test_sdk_responses_stream_helper_accumulates_the_final_response() -> None:
    client = fake_openai_client(Canned(KINDS["text_and_call"], KINDS["refusal"]))
    with client.responses.stream(model="m", input="hi", tools=RESPONSES_TOOLS) as stream:  # type: ignore[arg-type]
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == "Let me check."
    assert final.output_text == "Let me check."
    assert [(o.type, getattr(o, "name", None)) for o in final.output] == [
        ("message", None),
        ("function_call", "get_weather"),
    ]
    with client.responses.stream(model="m", input="hi") as stream:
        refusals = [e.type for e in stream if e.type.startswith("response.refusal")]
        refused = stream.get_final_response()
    assert refusals[-1] == "response.refusal.done"
    assert refused.output[0].content[0].refusal == KINDS["refusal"].message.refusal  # type: ignore[union-attr]


async def _async_streams() -> tuple[ModelResponse, ModelResponse]:
    chat = OpenAIChatModel(
        fake_async_openai_client(Canned(KINDS["parallel_calls"])), "m", stream=True
    )
    responses = OpenAIResponsesModel(
        fake_async_openai_client(Canned(KINDS["parallel_calls"])), "m", stream=True
    )
    request = model_request()
    return await chat.arequest(request), await responses.arequest(request)


def test_async_streaming_through_both_adapters() -> None:
    chat, responses = asyncio.run(_async_streams())
    expected = dataclasses.replace(KINDS["parallel_calls"], model_name="m")
    assert chat == expected
    assert responses == expected


def test_small_chunk_size_splits_arguments_finely() -> None:
    transport = OpenAIWireTransport(Canned(KINDS["tool_call"]), chunk_chars=1)
    with httpx2.Client(transport=transport, base_url=FAKE_BASE_URL) as http:
        text = http.post(
            "/chat/completions", json={"model": "m", "messages": USER, "stream": True}
        ).text
    assert text.count('"arguments":"') > len(KINDS["tool_call"].message.tool_calls[0].arguments)


def _big_call(size: int) -> ModelResponse:
    arguments = json.dumps({"blob": "x" * size})
    return ModelResponse(
        message=AssistantMessage(
            tool_calls=(ToolCall(id="call_big", name="store", arguments=arguments),)
        ),
        finish_reason="tool_calls",
    )


@pytest.mark.parametrize("path", ["/chat/completions", "/responses"])
def test_large_payloads_stream_in_a_bounded_number_of_deltas(path: str) -> None:
    text = " ".join(f"word{i}" for i in range(5000))
    for response, field in (
        (_big_call(100_000), "arguments"),
        (ModelResponse(message=AssistantMessage(content=text)), "text"),
    ):
        events = _raw_events(
            Canned(response), path, {"model": "m", "input": "hi", "messages": USER, "stream": True}
        )
        datas = [json.loads(d) for _, d in events if d != "[DONE]"]
        if path == "/chat/completions":
            deltas = [d["choices"][0]["delta"] for d in datas if d["choices"]]
            if field == "arguments":
                pieces = [
                    c["function"]["arguments"]
                    for d in deltas
                    for c in d.get("tool_calls", [])
                    if c["function"].get("arguments")
                ]
                expected = response.message.tool_calls[0].arguments
            else:
                pieces = [d["content"] for d in deltas if d.get("content")]
                expected = text
        else:
            kind = (
                "response.function_call_arguments.delta"
                if field == "arguments"
                else "response.output_text.delta"
            )
            pieces = [d["delta"] for d in datas if d["type"] == kind]
            expected = response.message.tool_calls[0].arguments if field == "arguments" else text
        assert 1 < len(pieces) <= 64
        assert "".join(pieces) == expected


def test_max_chunks_is_configurable_and_validated() -> None:
    transport = OpenAIWireTransport(Canned(_big_call(1000)), max_chunks=4)
    with httpx2.Client(transport=transport, base_url=FAKE_BASE_URL) as http:
        text = http.post(
            "/chat/completions", json={"model": "m", "messages": USER, "stream": True}
        ).text
    assert text.count('"arguments":"') == 1 + 4  # the header's empty string, then 4 pieces
    for bad in (0, -1, True, 2.5):
        with pytest.raises(UsageError, match="max_chunks must be an int >= 1"):
            OpenAIWireTransport(Canned(_big_call(1)), max_chunks=bad)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="chunk_chars must be an int >= 1"):
        OpenAIWireTransport(Canned(_big_call(1)), chunk_chars=0)


@pytest.mark.parametrize("adapter", [OpenAIChatModel, OpenAIResponsesModel])
def test_a_megabyte_argument_streams_through_the_sdk_intact(adapter: type) -> None:
    expected = _big_call(1_000_000)
    model = adapter(fake_openai_client(Canned(expected)), "m", stream=True)
    got = model.request(model_request())
    assert got.message.tool_calls[0].arguments == expected.message.tool_calls[0].arguments
