"""The Anthropic adapter over the official SDK: sync/async, streamed or not, errors, thinking."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import httpx2
import pytest
from wire_helpers import KINDS, TIME, WEATHER, Canned, model_request

from harness._errors import ProviderError, UsageError
from harness.loop import ModelSettings
from harness.messages import AssistantMessage, ToolMessage, UserMessage
from harness.models import (
    ANTHROPIC_CAPABILITIES,
    AnthropicModel,
    OpenAIWireTransport,
    fake_anthropic_client,
    fake_async_anthropic_client,
    map_anthropic_error,
)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("kind", ["text", "tool_call", "parallel_calls", "text_and_call", "length"])
def test_sync_and_async_read_what_the_fake_served(kind: str, stream: bool) -> None:
    served = KINDS[kind]
    sync = AnthropicModel(fake_anthropic_client(Canned(served)), "claude-x", stream=stream)
    got = sync.request(model_request())
    assert got.message == served.message
    assert got.finish_reason == served.finish_reason
    assert got.usage == served.usage and got.model_name == "claude-x"
    async_model = AnthropicModel(
        fake_async_anthropic_client(Canned(served)), "claude-x", stream=stream
    )
    assert asyncio.run(async_model.arequest(model_request())) == got


def test_a_sync_client_works_under_arun_and_an_async_one_refuses_run() -> None:
    sync = AnthropicModel(fake_anthropic_client(Canned(KINDS["text"])), "m")
    assert asyncio.run(sync.arequest(model_request())).message == KINDS["text"].message
    async_model = AnthropicModel(fake_async_anthropic_client(Canned(KINDS["text"])), "m")
    with pytest.raises(UsageError, match="async client"):
        async_model.request(model_request())


def test_the_request_on_the_wire() -> None:
    canned = Canned(KINDS["text"])
    transport = OpenAIWireTransport(canned)
    model = AnthropicModel(
        fake_anthropic_client(transport), "claude-x", max_tokens=321, defaults={"temperature": 0}
    )
    history = [
        UserMessage(content="q"),
        AssistantMessage(tool_calls=(WEATHER, TIME)),
        ToolMessage(tool_call_id="call_a", content="21C"),
        ToolMessage(tool_call_id="call_b", content="noon"),
    ]
    model.request(model_request(history, settings=ModelSettings(parallel_tool_calls=False)))
    sent = transport.requests[0].body
    assert sent["max_tokens"] == 321 and sent["temperature"] == 0
    assert sent["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert [t["name"] for t in sent["tools"]] == ["get_weather", "get_time"]
    assert [b["tool_use_id"] for b in sent["messages"][2]["content"]] == ["call_a", "call_b"]
    assert list(canned.requests[0].messages) == history  # the fake read back the same history


def _replaying(*bodies: dict[str, Any]) -> tuple[anthropic.Anthropic, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []
    queue = list(bodies)

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.read()))
        return httpx2.Response(200, json=queue.pop(0))

    client = anthropic.Anthropic(
        base_url="http://claude.test",
        api_key="sk-ant-secret-value",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    return client, sent


def test_thinking_blocks_go_back_unchanged_and_are_forgotten_after_the_run() -> None:
    thought = {"type": "thinking", "thinking": "use the tool", "signature": "c2ln"}
    redacted = {"type": "redacted_thinking", "data": "b3BhcXVl"}
    first = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [
            thought,
            redacted,
            {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris"}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 5},
    }
    final = {**first, "content": [{"type": "text", "text": "Sunny."}], "stop_reason": "end_turn"}
    client, sent = _replaying(first, final, final)
    model = AnthropicModel(client, "claude-x")
    answer = model.request(model_request())
    history = [
        UserMessage(content="q"),
        answer.message,
        ToolMessage(tool_call_id="t1", content="21C"),
    ]
    model.request(model_request(history, iteration=2))
    assistant = sent[1]["messages"][1]["content"]
    assert assistant[:2] == [thought, redacted]
    assert assistant[2]["type"] == "tool_use"
    model.end_run(completed=True)
    model.request(model_request(history, iteration=2))
    assert [b["type"] for b in sent[2]["messages"][1]["content"]] == ["tool_use"]


def test_errors_are_mapped_and_credentials_scrubbed() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            401,
            json={
                "type": "error",
                "error": {"type": "authentication_error", "message": "bad key sk-ant-secret-value"},
            },
        )

    client = anthropic.Anthropic(
        base_url="http://claude.test",
        api_key="sk-ant-secret-value",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    with pytest.raises(ProviderError) as info:
        AnthropicModel(client, "m").request(model_request())
    assert info.value.status == 401 and info.value.code == "authentication_error"
    assert "sk-ant-secret-value" not in str(info.value) and "[hidden]" in str(info.value)
    assert not info.value.retryable


def test_connection_errors_and_other_sdk_errors() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("refused", request=request)

    client = anthropic.Anthropic(
        base_url="http://claude.test",
        api_key="k",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    with pytest.raises(ProviderError) as info:
        AnthropicModel(client, "m").request(model_request())
    assert info.value.code == "connection_error" and info.value.retryable
    other = map_anthropic_error(anthropic.AnthropicError("odd"))
    assert type(other) is ProviderError and "odd" in str(other)


def test_prompt_too_long_is_context_length_exceeded() -> None:
    from harness._errors import ContextLengthExceeded

    error = ProviderError("prompt is too long: 210000 tokens > 200000 maximum", status=400)
    with pytest.raises(ContextLengthExceeded):
        AnthropicModel(fake_anthropic_client(Canned(error)), "m").request(model_request())


def test_construction_is_validated() -> None:
    client = fake_anthropic_client(Canned(KINDS["text"]))
    with pytest.raises(UsageError, match=r"anthropic\.Anthropic or anthropic\.AsyncAnthropic"):
        AnthropicModel(object(), "m")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="model must be a model name"):
        AnthropicModel(client, "")
    with pytest.raises(UsageError, match="max_tokens must be an int >= 1"):
        AnthropicModel(client, "m", max_tokens=0)
    with pytest.raises(UsageError, match=r"tool_history must be one of \['redeclare'"):
        AnthropicModel(client, "m", tool_history="ignore")  # type: ignore[arg-type]
    model = AnthropicModel(client, "m", name="claude")
    assert model.name == "claude" and model.capabilities == ANTHROPIC_CAPABILITIES
    assert model.capabilities.tool_history == "tools_defined"
    assert repr(model) == "AnthropicModel(model='m', stream=False)"


def test_a_failed_tool_reaches_claude_as_an_error_result() -> None:
    import harness
    from harness import llm_tool
    from harness.models import ScriptedModel, call, reply

    @llm_tool
    def get_weather(city: str) -> str:
        """Weather of a city."""
        raise RuntimeError("weather service down")

    served = ScriptedModel([call("get_weather", city="Paris"), reply("No weather today.")])
    transport = OpenAIWireTransport(served)
    model = AnthropicModel(fake_anthropic_client(transport), "claude-x")
    result = harness.run(model, "Weather?", tools=[get_weather])
    assert result.output == "No weather today."
    block = transport.requests[1].body["messages"][2]["content"][0]
    assert block["type"] == "tool_result" and block["is_error"] is True
    assert "weather service down" in block["content"]
    seen = [m for m in result.messages if isinstance(m, ToolMessage)]
    assert seen[0].is_error is True
