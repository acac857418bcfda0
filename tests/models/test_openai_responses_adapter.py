"""The Responses API adapter: stateless input, reasoning items passed back, parsing."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import openai
import pytest
from wire_helpers import KINDS, RESPONSES_TOOLS, Canned, model_request

from harness import ProviderError, UsageError
from harness.formats.openai_responses import (
    reasoning_items,
    request_body as responses_params,
    response_from_body as responses_response_from_response,
    response_from_events as responses_response_from_events,
)
from harness.loop import ModelSettings
from harness.messages import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from harness.models import (
    OPENAI_RESPONSES_CAPABILITIES,
    OpenAIResponsesModel,
    OpenAIWireTransport,
    fake_async_openai_client,
    fake_openai_client,
)
from harness.tools import ToolChoice

CALL = ToolCall(id="c1", name="get_weather", arguments='{"city": "Paris"}')
HISTORY = [
    SystemMessage(content="Be brief."),
    UserMessage(content="Weather?"),
    AssistantMessage(content="Checking.", tool_calls=(CALL,)),
    ToolMessage(tool_call_id="c1", content="9C", name="get_weather"),
    AssistantMessage(refusal="No."),
]


def test_params_send_the_full_input_each_turn() -> None:
    settings = ModelSettings(
        tool_choice="get_weather",
        parallel_tool_calls=True,
        output_schema={"type": "object"},
        output_name="Answer",
        extra={"max_output_tokens": 99},
    )
    params = responses_params(model_request(HISTORY, settings=settings), model="gpt-test")
    assert params["input"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Checking."},
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "get_weather",
            "arguments": CALL.arguments,
        },
        {"type": "function_call_output", "call_id": "c1", "output": "9C"},
        {"role": "assistant", "content": "No."},
    ]
    assert params["tools"] == [{**t, "strict": False} for t in RESPONSES_TOOLS]
    assert params["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert params["parallel_tool_calls"] is True
    assert params["text"]["format"]["name"] == "Answer"
    assert params["store"] is False
    assert params["include"] == ["reasoning.encrypted_content"]
    assert params["max_output_tokens"] == 99


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", "auto"),
        (ToolChoice.tool("f"), {"type": "function", "name": "f"}),
        (
            ToolChoice.allowed_tools(["f"]),
            {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "f"}]},
        ),
    ],
)
def test_tool_choice_conversion(choice: Any, expected: Any) -> None:
    settings = ModelSettings(tool_choice=choice)
    assert responses_params(model_request(settings=settings), model="m")["tool_choice"] == expected


def test_params_options() -> None:
    params = responses_params(
        model_request(tools=[]), model="m", stream=True, include_reasoning=False
    )
    assert params == {
        "model": "m",
        "input": [{"role": "user", "content": "What's the weather in Paris?"}],
        "store": False,
        "stream": True,
    }


def _response(output: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "o-test",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "status": "completed",
        **fields,
    }


REASONING = {
    "id": "rs_1",
    "type": "reasoning",
    "summary": [{"type": "summary_text", "text": "Need the weather tool."}],
    "encrypted_content": "gAAAA-opaque",
}
FUNCTION_CALL = {
    "id": "fc_1",
    "type": "function_call",
    "call_id": "c1",
    "name": "get_weather",
    "arguments": '{"city": "Paris"}',
    "status": "completed",
}
ANSWER = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "9C and sunny.", "annotations": []}],
}


def test_reasoning_items_are_passed_back_before_their_calls() -> None:
    bodies: list[dict[str, Any]] = []
    answers = [_response([REASONING, FUNCTION_CALL]), _response([ANSWER])]

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=answers[len(bodies) - 1])

    client = openai.OpenAI(
        base_url="http://x.test/v1",
        api_key="k",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    model = OpenAIResponsesModel(client, "o-test")
    first = model.request(model_request())
    assert first.message.tool_calls == (CALL,)
    assert first.finish_reason == "tool_calls"
    history = [
        UserMessage(content="What's the weather in Paris?"),
        first.message,
        ToolMessage(tool_call_id="c1", content="9C"),
    ]
    second = model.request(model_request(history, iteration=2))
    assert second.message.content == "9C and sunny."
    sent = bodies[1]["input"]
    assert [item.get("type", item.get("role")) for item in sent] == [
        "user",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert sent[1]["encrypted_content"] == "gAAAA-opaque"
    assert sent[1]["id"] == "rs_1"
    model.end_run(completed=True)
    assert "gAAAA-opaque" not in json.dumps(model.params(model_request(history)))


def test_parsing_status_usage_and_errors() -> None:
    incomplete = _response(
        [ANSWER], status="incomplete", incomplete_details={"reason": "content_filter"}
    )
    assert responses_response_from_response(incomplete).finish_reason == "content_filter"
    odd = _response([ANSWER], status="incomplete", incomplete_details=None)
    assert responses_response_from_response(odd).finish_reason == "length"
    failed = _response([], status="failed", error={"code": "server_error", "message": "down"})
    with pytest.raises(ProviderError, match="the response failed: down") as info:
        responses_response_from_response(failed)
    assert info.value.code == "server_error"
    assert reasoning_items(_response([REASONING, ANSWER]))[0]["encrypted_content"] == "gAAAA-opaque"


def test_event_streams_need_a_final_event() -> None:
    done = {"type": "response.completed", "sequence_number": 1, "response": _response([ANSWER])}
    assert responses_response_from_events([done]).message.content == "9C and sunny."
    with pytest.raises(ProviderError, match=r"without response\.completed"):
        responses_response_from_events([])
    error = {"type": "error", "message": "overloaded", "code": None, "param": None}
    with pytest.raises(ProviderError, match="overloaded"):
        responses_response_from_events([error])


def test_sync_async_and_capabilities() -> None:
    request = model_request()
    sync_model = OpenAIResponsesModel(fake_openai_client(Canned(KINDS["text"], repeat=True)))
    async_model = OpenAIResponsesModel(
        fake_async_openai_client(Canned(KINDS["text"], repeat=True)), "m", name="resp"
    )
    expected = KINDS["text"].message.content
    assert asyncio.run(sync_model.arequest(request)).message.content == expected
    assert asyncio.run(async_model.arequest(request)).message.content == expected
    with pytest.raises(UsageError, match="async client"):
        async_model.request(request)
    assert sync_model.capabilities == OPENAI_RESPONSES_CAPABILITIES
    assert async_model.name == "resp"
    assert repr(sync_model) == "OpenAIResponsesModel(model='gpt-4o-mini', stream=False)"
    with pytest.raises(UsageError, match="model must be"):
        OpenAIResponsesModel(fake_openai_client(Canned()), "")


def test_async_streaming_errors_are_mapped() -> None:
    from harness import RateLimited

    error = RateLimited("slow", status=429, retry_after=1)
    model = OpenAIResponsesModel(fake_async_openai_client(Canned(error)), "m", stream=True)
    with pytest.raises(RateLimited) as info:
        asyncio.run(model.arequest(model_request()))
    assert info.value.retry_after == 1.0


def test_the_sdk_sends_what_params_says() -> None:
    transport = OpenAIWireTransport(Canned(KINDS["text"]))
    model = OpenAIResponsesModel(fake_openai_client(transport), "m")
    request = model_request(HISTORY[:4])
    model.request(request)
    assert transport.requests[0].body == model.params(request)
