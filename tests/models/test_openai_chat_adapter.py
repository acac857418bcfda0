"""The Chat Completions adapter: request building, parsing, errors, clients, capabilities."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import openai
import pytest
from wire_helpers import KINDS, TOOLS, Canned, model_request

from harness import ProviderError, RateLimited, UsageError
from harness.formats import openai_chat
from harness.formats.openai_chat import (
    request_body as chat_params,
    response_from_body as chat_response_from_completion,
    response_from_events as chat_response_from_chunks,
)
from harness.loop import ModelCapabilities, ModelSettings
from harness.messages import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from harness.models import (
    OPENAI_CHAT_CAPABILITIES,
    OpenAIChatModel,
    OpenAIWireTransport,
    fake_async_openai_client,
    fake_openai_client,
    map_openai_error,
)

HISTORY = [
    SystemMessage(content="Be brief."),
    UserMessage(content="Weather?"),
    AssistantMessage(tool_calls=(ToolCall(id="c1", name="get_weather", arguments="{}"),)),
    ToolMessage(tool_call_id="c1", content="9C", name="get_weather"),
]


def test_params_carry_messages_tools_and_settings() -> None:
    settings = ModelSettings(
        tool_choice="get_weather",
        parallel_tool_calls=False,
        output_schema={"type": "object", "properties": {"x": {"type": "integer"}}},
        output_name="My Output!",
        extra={"temperature": 0},
    )
    params = chat_params(
        model_request(HISTORY, settings=settings),
        model="gpt-test",
        defaults={"temperature": 1, "max_tokens": 50},
    )
    assert params["model"] == "gpt-test"
    assert params["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "9C"}
    assert params["messages"][2]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert params["tools"] == TOOLS
    assert params["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert params["parallel_tool_calls"] is False
    assert params["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "My_Output_",
            "schema": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "strict": False,
        },
    }
    assert params["temperature"] == 0 and params["max_tokens"] == 50  # extra wins over defaults
    assert "stream" not in params


def test_params_without_tools_or_settings_stay_minimal() -> None:
    params = chat_params(model_request(tools=[]), model="m", stream=True)
    assert params == {
        "model": "m",
        "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    named = chat_params(model_request(settings=ModelSettings(tool_choice="none")), model="m")
    assert named["tool_choice"] == "none"
    mapping = {"type": "function", "function": {"name": "x"}}
    choice = openai_chat.tool_choice_from_param(mapping)  # a provider dict: its format reads it
    given = chat_params(model_request(settings=ModelSettings(tool_choice=choice)), model="m")
    assert given["tool_choice"] == mapping
    unnamed = ModelSettings(output_schema={"type": "object"})
    assert (
        chat_params(model_request(settings=unnamed), model="m")["response_format"]["json_schema"][
            "name"
        ]
        == "output"
    )


def test_the_request_the_sdk_sends_is_what_params_says() -> None:
    transport = OpenAIWireTransport(Canned(KINDS["text"]))
    model = OpenAIChatModel(fake_openai_client(transport), "gpt-test", defaults={"seed": 7})
    request = model_request(HISTORY, settings=ModelSettings(parallel_tool_calls=True))
    model.request(request)
    assert transport.requests[0].body == model.params(request)


def test_parsing_accepts_json_and_sdk_objects() -> None:
    data = {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [
            {
                "index": 0,
                "finish_reason": "function_call",
                "message": {"role": "assistant", "content": None},
            }
        ],
    }
    got = chat_response_from_completion(data)
    assert got.finish_reason == "tool_calls"
    assert got.model_name == "gpt-4o"
    assert got.usage.total_tokens == 0
    with pytest.raises(ProviderError, match="no choices"):
        chat_response_from_completion({**data, "choices": []})
    with pytest.raises(ProviderError, match="before its first chunk"):
        chat_response_from_chunks([])


def test_sync_and_async_clients() -> None:
    sync_model = OpenAIChatModel(fake_openai_client(Canned(KINDS["text"], repeat=True)), "m")
    async_model = OpenAIChatModel(fake_async_openai_client(Canned(KINDS["text"], repeat=True)), "m")
    request = model_request()
    expected = KINDS["text"].message.content
    assert asyncio.run(sync_model.arequest(request)).message.content == expected  # thread
    assert asyncio.run(async_model.arequest(request)).message.content == expected
    with pytest.raises(UsageError, match=r"async client: use harness\.arun"):
        async_model.request(request)


def test_bad_constructor_arguments() -> None:
    with pytest.raises(UsageError, match=r"needs an openai.OpenAI or openai.AsyncOpenAI client"):
        OpenAIChatModel("sk-123")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="model must be a model name"):
        OpenAIChatModel(fake_openai_client(Canned()), "")


def test_capabilities_are_declared_and_overridable() -> None:
    client = fake_openai_client(Canned())
    assert OpenAIChatModel(client).capabilities == OPENAI_CHAT_CAPABILITIES
    assert OPENAI_CHAT_CAPABILITIES.supports_dynamic_tools and OPENAI_CHAT_CAPABILITIES.streaming
    custom = ModelCapabilities(parallel_tool_calls=False)
    model = OpenAIChatModel(client, "m", capabilities=custom, name="local")
    assert model.capabilities is custom
    assert model.name == "local"
    assert repr(model) == "OpenAIChatModel(model='m', stream=False)"


def test_the_api_key_never_appears_in_responses_or_errors() -> None:
    secret = "sk-proj-abcdefghijklmnopqrstuvwxyz"
    model = OpenAIChatModel(fake_openai_client(Canned(KINDS["text"]), api_key=secret), "m")
    response = model.request(model_request())
    assert secret not in repr(response)
    assert secret not in repr(model)

    def leaky(request: httpx2.Request) -> httpx2.Response:
        key = request.headers["authorization"].removeprefix("Bearer ")
        body = {
            "error": {"message": f"Incorrect API key provided: {key}", "code": "invalid_api_key"}
        }
        return httpx2.Response(401, json=body)

    client = openai.OpenAI(
        base_url="http://x.test/v1",
        api_key=secret,
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(leaky)),
    )
    with pytest.raises(ProviderError) as info:
        OpenAIChatModel(client, "m").request(model_request())
    assert info.value.status == 401 and info.value.code == "invalid_api_key"
    assert secret not in str(info.value)
    assert "[hidden]" in str(info.value)
    assert info.value.__cause__ is None  # the SDK exception (with request headers) is dropped


def _status_error(status: int, headers: dict[str, str], body: Any) -> openai.APIStatusError:
    request = httpx2.Request("POST", "http://x.test/v1/chat/completions")
    response = httpx2.Response(status, headers=headers, json=body, request=request)
    client = openai.OpenAI(api_key="k", base_url="http://x.test/v1")
    return client._make_status_error_from_response(response)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after-ms": "x", "retry-after": "2"}, 2.0),
        ({}, None),
    ],
)
def test_retry_after_headers(headers: dict[str, str], expected: float | None) -> None:
    error = map_openai_error(_status_error(429, headers, {"error": {"message": "slow"}}))
    assert isinstance(error, RateLimited)
    assert error.retry_after == expected


def test_error_mapping_of_other_sdk_errors() -> None:
    request = httpx2.Request("POST", "http://x.test")
    connection = map_openai_error(openai.APIConnectionError(request=request))
    assert connection.code == "connection_error" and connection.retryable
    generic = map_openai_error(openai.OpenAIError("weird"))
    assert type(generic) is ProviderError and "weird" in str(generic)
    plain = map_openai_error(_status_error(418, {}, "teapot"))
    assert plain.status == 418 and plain.code is None


def test_streaming_adapter_sends_stream_options() -> None:
    transport = OpenAIWireTransport(Canned(KINDS["tool_call"]))
    model = OpenAIChatModel(fake_openai_client(transport), "m", stream=True)
    got = model.request(model_request())
    assert got.message.tool_calls == KINDS["tool_call"].message.tool_calls
    body = transport.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert json.dumps(body)  # JSON-able, nothing else sneaked in


def test_tool_choice_is_only_sent_with_tools() -> None:
    settings = ModelSettings(tool_choice="required", parallel_tool_calls=True)
    params = chat_params(model_request(tools=[], settings=settings), model="m")
    assert "tool_choice" not in params and "parallel_tool_calls" not in params


def test_streams_that_repeat_the_call_id_and_name_in_every_delta_accumulate_once() -> None:
    """llama.cpp's server repeats ``id`` and ``function.name`` in each tool-call delta."""

    def chunk(delta: dict, finish: str | None = None) -> dict:  # type: ignore[type-arg]
        return {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def piece(text: str) -> dict:  # type: ignore[type-arg]
        return {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "search", "arguments": text},
                }
            ]
        }

    chunks = [
        chunk({"role": "assistant"}),
        chunk(piece('{"q"')),
        chunk(piece(': "x"}')),
        chunk({}, "tool_calls"),
    ]
    from openai.types.chat import ChatCompletionChunk

    for form in (chunks, [ChatCompletionChunk.model_validate(c) for c in chunks]):
        (only,) = chat_response_from_chunks(form).message.tool_calls
        assert (only.id, only.name, only.arguments) == ("call_1", "search", '{"q": "x"}')


def test_sdk_chunks_and_their_dicts_read_alike_with_parallel_and_repeated_calls() -> None:
    """SDK chunks are kept as built unless a call header repeats; the result is the same."""
    from openai.types.chat import ChatCompletionChunk

    def chunk(*calls: dict) -> dict:  # type: ignore[type-arg]
        delta = {"tool_calls": list(calls)}
        return {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
        }

    def call(index: int, arguments: str, header: bool) -> dict:  # type: ignore[type-arg]
        head = {"id": f"call_{index}", "type": "function"} if header else {}
        name = {"name": f"tool_{index}"} if header else {}
        return {"index": index, **head, "function": {**name, "arguments": arguments}}

    streams = [
        [chunk(call(0, "", True)), chunk(call(0, "{}", False)), chunk(call(1, "[1]", True))],
        [chunk(call(0, "{", True), call(1, "", True)), chunk(call(0, "}", True))],  # repeat
        [chunk(call(0, "{", True), call(0, "}", True))],  # repeated within one chunk
    ]
    for chunks in streams:
        objects = [ChatCompletionChunk.model_validate(c) for c in chunks]
        from_dicts = chat_response_from_chunks(chunks).message.tool_calls
        assert chat_response_from_chunks(objects).message.tool_calls == from_dicts
        assert [c.id for c in from_dicts] == sorted({c.id for c in from_dicts})
