"""Malformed provider responses: a ProviderError naming the field, never a raw exception."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import openai
import pytest
from wire_helpers import model_request

from harness import ProviderError
from harness.formats.openai_chat import (
    response_from_body as chat_response_from_completion,
    response_from_events as chat_response_from_chunks,
)
from harness.formats.openai_responses import response_from_body as responses_response_from_response
from harness.loop import run
from harness.messages import UserMessage
from harness.models import (
    OpenAIChatModel,
    OpenAIResponsesModel,
)

CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


def _completion(**message: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, **message},
            }
        ],
    }


def _call(**changes: Any) -> dict[str, Any]:
    function = {**CALL["function"], **changes.pop("function", {})}
    return {**CALL, **changes, "function": function}


FIELD = "choices[0].message.tool_calls[0]"
CASES: list[tuple[str, Any, str]] = [
    (
        "arguments object",
        _completion(tool_calls=[_call(function={"arguments": {"a": 1}})]),
        f"{FIELD}.function.arguments must be a string (JSON text), got an object",
    ),
    (
        "arguments number",
        _completion(tool_calls=[_call(function={"arguments": 5})]),
        f"{FIELD}.function.arguments must be a string (JSON text), got an integer",
    ),
    (
        "arguments null",
        _completion(tool_calls=[_call(function={"arguments": None})]),
        f"{FIELD}.function.arguments must be a string (JSON text), got null",
    ),
    (
        "name null",
        _completion(tool_calls=[_call(function={"name": None})]),
        f"{FIELD}.function.name must be a string, got null",
    ),
    ("id null", _completion(tool_calls=[_call(id=None)]), f"{FIELD}.id must be a string, got null"),
    ("function null", _completion(tool_calls=[{**CALL, "function": None}]), f"{FIELD}.function"),
    ("tool_calls object", _completion(tool_calls={"a": 1}), "tool_calls must be an array or null"),
    ("call a string", _completion(tool_calls=["x"]), f"{FIELD} must be an object, got a string"),
    ("content number", _completion(content=5), "message.content must be a string or null"),
    ("list body", [1, 2], "the response body must be a JSON object, got an array"),
    ("string body", "hello", "the response body must be a JSON object, got a string"),
    ("choices string", {"id": "x", "choices": "no"}, "choices must be an array, got a string"),
    ("message null", {"choices": [{"message": None}]}, "choices[0].message must be an object"),
    ("usage string", {**_completion(content="x"), "usage": "lots"}, "usage must be an object"),
    (
        "usage tokens",
        {**_completion(content="x"), "usage": {"prompt_tokens": "1"}},
        "usage.prompt_tokens must be an integer >= 0, got a string",
    ),
]


@pytest.mark.parametrize(("body", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_completions_name_the_field(body: Any, message: str) -> None:
    with pytest.raises(ProviderError) as info:
        chat_response_from_completion(body)
    assert message in str(info.value)
    assert info.value.code == "malformed_response"


def test_an_error_body_says_it_is_an_error_body() -> None:
    body = {"error": {"message": "model overloaded", "type": "server_error", "code": None}}
    with pytest.raises(ProviderError) as info:
        chat_response_from_completion(body)
    assert str(info.value) == (
        "the response is an error body, not a chat completion: model overloaded "
        "(code='server_error')"
    )
    assert info.value.code == "error_body"


def test_a_well_formed_completion_still_reads() -> None:
    body = {**_completion(tool_calls=[CALL]), "usage": {"prompt_tokens": 3}}
    response = chat_response_from_completion(body)
    assert response.message.tool_calls[0].name == "f"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (3, 0)


def _client(content: bytes, *, asynchronous: bool = False) -> Any:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=content, headers={"content-type": "application/json"})

    transport = httpx2.MockTransport(handler)
    if asynchronous:
        return openai.AsyncOpenAI(
            api_key="sk-test",
            base_url="http://fake.invalid/v1",
            http_client=httpx2.AsyncClient(transport=transport),
            max_retries=0,
        )
    return openai.OpenAI(
        api_key="sk-test",
        base_url="http://fake.invalid/v1",
        http_client=httpx2.Client(transport=transport),
        max_retries=0,
    )


BODIES = [(json.dumps(c[1]).encode(), c[2]) for c in CASES] + [
    (b"not json at all", "the body is not valid JSON"),
    (b'{"choices": [', "the body is not valid JSON"),
]


@pytest.mark.parametrize(("body", "message"), BODIES)
def test_the_adapter_turns_malformed_bodies_into_provider_errors(body: bytes, message: str) -> None:
    request = model_request([UserMessage(content="hi")])
    with pytest.raises(ProviderError, match="malformed") as info:
        OpenAIChatModel(_client(body), model="m").request(request)
    assert message in str(info.value)
    with pytest.raises(ProviderError, match="malformed"):
        asyncio.run(OpenAIChatModel(_client(body, asynchronous=True), model="m").arequest(request))


def test_a_malformed_response_ends_the_run_with_the_history_attached() -> None:
    body = json.dumps(_completion(tool_calls=[_call(function={"arguments": None})])).encode()
    with pytest.raises(ProviderError) as info:
        run(OpenAIChatModel(_client(body), model="m"), "hi")
    assert info.value.messages is not None and info.value.messages[-1].role == "user"
    assert info.value.trace is not None


CHUNK = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m"}


@pytest.mark.parametrize(
    ("chunk", "message"),
    [
        ({**CHUNK, "choices": "broken"}, "stream chunk 0: choices must be an array"),
        ({**CHUNK, "choices": [3]}, "stream chunk 0: choices[0] must be an object"),
        ({**CHUNK, "choices": [{"index": 0, "delta": "x"}]}, "choices[0].delta must be an object"),
        ([1], "stream chunk 0: the chunk must be a JSON object, got an array"),
    ],
)
def test_a_malformed_stream_chunk_is_a_provider_error(chunk: Any, message: str) -> None:
    with pytest.raises(ProviderError, match="malformed") as info:
        chat_response_from_chunks([chunk])
    assert message in str(info.value)


# -- the Responses API adapter -----------------------------------------------------------


def _response(*output: Any, **extra: Any) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "model": "m", "output": list(output), **extra}


FUNCTION_CALL = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
RESPONSES_CASES: list[tuple[str, Any, str]] = [
    ("list body", [1], "the response body must be a JSON object, got an array"),
    ("output string", _response() | {"output": "x"}, "output must be an array, got a string"),
    ("item string", _response("x"), "output[0] must be an object, got a string"),
    (
        "arguments object",
        _response({**FUNCTION_CALL, "arguments": {"a": 1}}),
        "output[0].arguments must be a string (JSON text), got an object",
    ),
    (
        "arguments null",
        _response({**FUNCTION_CALL, "arguments": None}),
        "output[0].arguments must be a string (JSON text), got null",
    ),
    ("name null", _response({**FUNCTION_CALL, "name": None}), "output[0].name must be a string"),
    (
        "call_id null",
        _response({**FUNCTION_CALL, "call_id": None}),
        "output[0].call_id must be a string",
    ),
    (
        "content string",
        _response({"type": "message", "content": "hi"}),
        "output[0].content must be an array",
    ),
    (
        "text null",
        _response({"type": "message", "content": [{"type": "output_text", "text": None}]}),
        "output[0].content[0].text must be a string",
    ),
    ("usage string", _response(usage="lots"), "usage must be an object or null"),
]


@pytest.mark.parametrize(
    ("body", "message"), [c[1:] for c in RESPONSES_CASES], ids=[c[0] for c in RESPONSES_CASES]
)
def test_malformed_responses_name_the_field(body: Any, message: str) -> None:
    with pytest.raises(ProviderError) as info:
        responses_response_from_response(body)
    assert message in str(info.value)
    assert info.value.code == "malformed_response"


def test_a_well_formed_response_still_reads() -> None:
    text = {"type": "message", "content": [{"type": "output_text", "text": "hi"}]}
    response = responses_response_from_response(
        _response(text, FUNCTION_CALL, usage={"input_tokens": 2, "output_tokens": 1})
    )
    assert response.message.content == "hi"
    assert response.message.tool_calls[0].name == "f"
    assert (response.usage.input_tokens, response.finish_reason) == (2, "tool_calls")


def test_the_responses_adapter_reports_a_non_json_body() -> None:
    request = model_request([UserMessage(content="hi")])
    with pytest.raises(ProviderError, match="the body is not valid JSON") as info:
        OpenAIResponsesModel(_client(b"<html>oops</html>"), model="m").request(request)
    assert info.value.code == "malformed_response"
