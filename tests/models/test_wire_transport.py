"""The in-process fake OpenAI server (httpx2 transport) under the real SDK: non-streaming."""

from __future__ import annotations

import dataclasses
import json

import httpx2
import openai
import pytest
from openai.types.chat import ChatCompletion
from openai.types.responses import Response
from wire_helpers import KINDS, RESPONSES_TOOLS, TOOLS, Canned, model_request

from harness import ContextLengthExceeded, ProviderError, ProviderTimeout, RateLimited, UsageError
from harness.messages import AssistantMessage, ToolMessage, UserMessage
from harness.models import (
    FAKE_BASE_URL,
    OpenAIChatModel,
    OpenAIResponsesModel,
    OpenAIWireTransport,
    ScriptedModel,
    WireApp,
    call,
    fake_async_openai_client,
    fake_openai_client,
    reply,
)
from harness.tools import ToolChoice

USER = [{"role": "user", "content": "What's the weather in Paris?"}]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_parses_with_the_sdk_chat_types(kind: str) -> None:
    expected = KINDS[kind]
    client = fake_openai_client(Canned(expected))
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-test",
        messages=USER,  # type: ignore[arg-type]
        tools=TOOLS,  # type: ignore[arg-type]
    )
    # strict validation against the SDK's own pydantic types, not the lenient construct
    strict = ChatCompletion.model_validate(json.loads(raw.http_response.text))
    completion = raw.parse()
    assert strict == completion
    choice = completion.choices[0]
    assert choice.finish_reason == expected.finish_reason
    assert choice.message.content == expected.message.content
    assert choice.message.refusal == expected.message.refusal
    calls = [
        (c.id, c.function.name, c.function.arguments)  # type: ignore[union-attr]
        for c in choice.message.tool_calls or []
    ]
    assert calls == [(c.id, c.name, c.arguments) for c in expected.message.tool_calls]
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == expected.usage.input_tokens
    assert completion.usage.completion_tokens == expected.usage.output_tokens
    assert completion.model == "gpt-test"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_chat_adapter_round_trips_every_kind(kind: str) -> None:
    expected = KINDS[kind]
    model = OpenAIChatModel(fake_openai_client(Canned(expected)), "gpt-test")
    got = model.request(model_request())
    assert got == dataclasses.replace(expected, model_name="gpt-test")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_parses_with_the_sdk_response_types(kind: str) -> None:
    expected = KINDS[kind]
    client = fake_openai_client(Canned(expected, repeat=True))
    raw = client.responses.with_raw_response.create(
        model="gpt-test",
        input="hi",
        tools=RESPONSES_TOOLS,  # type: ignore[arg-type]
    )
    strict = Response.model_validate(json.loads(raw.http_response.text))
    parsed = raw.parse()
    assert strict.status == parsed.status
    calls = [(o.call_id, o.name, o.arguments) for o in parsed.output if o.type == "function_call"]
    assert calls == [(c.id, c.name, c.arguments) for c in expected.message.tool_calls]
    assert parsed.output_text == (expected.message.content or "")
    assert parsed.usage is not None and parsed.usage.output_tokens == expected.usage.output_tokens
    incomplete = expected.finish_reason in ("length", "content_filter")
    assert parsed.status == ("incomplete" if incomplete else "completed")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_responses_adapter_round_trips_every_kind(kind: str) -> None:
    expected = KINDS[kind]
    model = OpenAIResponsesModel(fake_openai_client(Canned(expected)), "gpt-test")
    got = model.request(model_request())
    want = expected
    if kind == "content_filter":  # an empty text part carries no text on this API
        want = dataclasses.replace(expected, message=AssistantMessage(content=""))
    assert got == dataclasses.replace(want, model_name="gpt-test")


def test_models_endpoint_lists_the_served_model() -> None:
    client = fake_openai_client(ScriptedModel([], name="my-fake"))
    models = client.models.list()
    assert [m.id for m in models.data] == ["my-fake"]
    assert client.models.retrieve("gpt-4o").id == "gpt-4o"


def test_served_model_sees_history_tools_and_settings() -> None:
    model = Canned(KINDS["tool_call"])  # tool_choice "required": the fake honours it
    client = fake_openai_client(model)
    client.chat.completions.create(
        model="gpt-test",
        messages=[
            {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": "Weather?", "name": "ann"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "9C"}]},
        ],
        tools=TOOLS,  # type: ignore[arg-type]
        tool_choice="required",
        parallel_tool_calls=False,
        temperature=0.2,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "Out", "schema": {"type": "object"}},
        },
    )
    seen = model.requests[0]
    assert seen.tool_names == ("get_weather", "get_time")
    assert seen.iteration == 2
    assert seen.messages[0].content == "Be brief."  # developer is a system message
    assert seen.messages[-1] == ToolMessage(tool_call_id="call_1", content="9C")
    assert seen.settings.tool_choice == ToolChoice.required()
    assert seen.settings.parallel_tool_calls is False
    assert seen.settings.output_schema == {"type": "object"}
    assert seen.settings.output_name == "Out"
    assert seen.settings.extra == {"temperature": 0.2}


def test_responses_input_items_become_messages() -> None:
    model = Canned(KINDS["tool_call"])  # get_weather is forced: the fake honours it
    client = fake_openai_client(model)
    client.responses.create(
        model="gpt-test",
        instructions="Be brief.",
        input=[
            {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"role": "assistant", "content": "Checking."},
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "9C"},
        ],
        tools=RESPONSES_TOOLS,  # type: ignore[arg-type]
        tool_choice={"type": "function", "name": "get_weather"},
        text={"format": {"type": "json_schema", "name": "Out", "schema": {"type": "object"}}},
    )
    seen = model.requests[0]
    assert [m.role for m in seen.messages] == ["system", "user", "assistant", "tool"]
    assistant = seen.messages[2]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.content == "Checking."
    assert [c.name for c in assistant.tool_calls] == ["get_weather"]
    assert seen.messages[3] == ToolMessage(tool_call_id="c1", content="9C", name="get_weather")
    assert seen.settings.tool_choice == ToolChoice.tool("get_weather")
    assert seen.settings.output_name == "Out"


def test_a_plain_string_input_is_one_user_message() -> None:
    model = Canned(KINDS["text"])
    fake_openai_client(model).responses.create(model="m", input="hello")
    assert list(model.requests[0].messages) == [UserMessage(content="hello")]


# -- provider errors become real HTTP errors, and the SDK's own exceptions --------------


def test_rate_limit_is_a_429_with_retry_after_and_the_sdk_raises_its_type() -> None:
    error = RateLimited(
        "Rate limit reached.", status=429, retry_after=2.5, code="rate_limit_exceeded"
    )
    client = fake_openai_client(Canned(error))
    with pytest.raises(openai.RateLimitError) as info:
        client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert info.value.status_code == 429
    assert info.value.response.headers["retry-after"] == "2.5"
    assert info.value.code == "rate_limit_exceeded"
    assert info.value.body == {
        "message": "Rate limit reached.",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_adapters_map_sdk_errors_back_to_provider_errors(api: str) -> None:
    errors = [
        RateLimited("slow down", status=429, retry_after=3, code="rate_limit_exceeded"),
        ProviderError("boom", status=500, code="server_error"),
        ContextLengthExceeded("too long", status=400, code="context_length_exceeded"),
        ProviderTimeout("Request timed out."),
        ProviderError("no status"),
    ]
    cls = OpenAIChatModel if api == "chat" else OpenAIResponsesModel
    model = cls(fake_openai_client(Canned(*errors), api_key="sk-very-secret-key"), "m")
    got = []
    for _ in errors:
        with pytest.raises(ProviderError) as info:
            model.request(model_request())
        got.append(info.value)
    assert [type(e) for e in got] == [
        RateLimited,
        ProviderError,
        ContextLengthExceeded,
        ProviderTimeout,
        ProviderError,
    ]
    assert [e.status for e in got] == [429, 500, 400, None, 500]
    assert got[0].retry_after == 3.0 and got[0].retryable
    assert got[1].retryable and not got[2].retryable and got[3].retryable
    assert got[2].code == "context_length_exceeded"
    assert "status=429" in str(got[0]) and "slow down" in str(got[0])
    assert all("sk-very-secret-key" not in str(e) for e in got)


def test_sdk_retry_logic_runs_against_the_fake() -> None:
    script = Canned(
        RateLimited("slow down", status=429, retry_after=0.01),
        ProviderError("oops", status=503, retry_after=0.01),
        KINDS["text"],
    )
    transport = OpenAIWireTransport(script)
    client = fake_openai_client(transport, max_retries=2)
    completion = client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == KINDS["text"].message.content
    assert [r.retry_count for r in transport.requests] == [0, 1, 2]
    assert len(script.requests) == 3


def test_a_non_retryable_error_is_not_retried() -> None:
    transport = OpenAIWireTransport(
        Canned(ProviderError("x", status=500, retryable=False), KINDS["text"])
    )
    client = fake_openai_client(transport, max_retries=3)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert len(transport.requests) == 1


def test_a_timeout_is_a_read_timeout_the_sdk_retries_then_reports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("openai._base_client.INITIAL_RETRY_DELAY", 0.01)
    transport = OpenAIWireTransport(Canned(ProviderTimeout("slow"), repeat=True))
    client = fake_openai_client(transport, max_retries=1)
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert [r.retry_count for r in transport.requests] == [0, 1]


def test_model_exceptions_other_than_provider_errors_propagate() -> None:
    client = fake_openai_client(ScriptedModel([reply("only one")]))
    client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    with pytest.raises(Exception, match="script ran out"):
        client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]


def test_a_served_model_must_return_a_model_response() -> None:
    class Broken(Canned):
        def request(self, request):  # type: ignore[no-untyped-def]
            return "not a response"

    with pytest.raises(TypeError, match="must return a ModelResponse"):
        fake_openai_client(Broken()).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]


async def _async_round_trip() -> tuple[str | None, str | None]:
    chat = fake_async_openai_client(ScriptedModel([reply("async hello")]))
    completion = await chat.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    responses = fake_async_openai_client(ScriptedModel([reply("async hi")]))
    response = await responses.responses.create(model="m", input="hi")
    return completion.choices[0].message.content, response.output_text


def test_async_clients_work_unchanged() -> None:
    import asyncio

    assert asyncio.run(_async_round_trip()) == ("async hello", "async hi")


def test_plain_httpx2_client_with_the_transport() -> None:
    transport = OpenAIWireTransport(ScriptedModel([call("get_weather", city="Paris")]))
    with httpx2.Client(transport=transport, base_url=FAKE_BASE_URL) as http:
        answer = http.post(
            "/chat/completions", json={"model": "m", "messages": USER, "tools": TOOLS}
        )
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["x-request-id"].startswith("req_")
    data = answer.json()
    assert data["object"] == "chat.completion"
    assert data["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert transport.requests[0].body["model"] == "m"
    assert "authorization" not in repr(transport.requests)


def test_transport_and_app_reject_bad_arguments() -> None:
    with pytest.raises(UsageError, match="serves a harness Model"):
        OpenAIWireTransport("not a model")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="profile must be"):
        WireApp(ScriptedModel([]), profile="lax")  # type: ignore[arg-type]
