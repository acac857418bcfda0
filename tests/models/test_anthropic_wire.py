"""The fake Anthropic Messages endpoint: validation with the API's texts, JSON, SSE, errors."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest
from wire_helpers import KINDS, Canned, model_request, usage

from harness._errors import ProviderError, ProviderTimeout, RateLimited
from harness.formats.anthropic_messages import BLOCK_TYPES, NO_TOOLS_DEFINED
from harness.loop import ModelResponse
from harness.messages import AssistantMessage, ToolMessage
from harness.models import (
    AnthropicModel,
    OpenAIWireTransport,
    ScriptedModel,
    WireApp,
    WireServer,
    fake_anthropic_client,
    reply,
)
from harness.tools import ToolChoice

TOOL = {
    "name": "get_weather",
    "description": "Weather of a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
USE = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "21C"}


def body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "claude-x", "max_tokens": 100, "messages": messages, **extra}


def post(app: WireApp, data: Any, path: str = "/v1/messages") -> tuple[int, dict[str, Any]]:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    reply = app.handle("POST", path, raw, {"content-type": "application/json"})
    return reply.status, json.loads(reply.body)


def error_of(app: WireApp, data: Any) -> str:
    status, answer = post(app, data)
    assert status == 400, answer
    assert answer["type"] == "error"
    assert answer["error"]["type"] == "invalid_request_error"
    return str(answer["error"]["message"])


@pytest.fixture
def app() -> WireApp:
    return WireApp(Canned(KINDS["text"], repeat=True))


TOOL_TURNS = [
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": [USE]},
    {"role": "user", "content": [RESULT]},
]


def test_tool_blocks_without_tools_get_the_apis_400(app: WireApp) -> None:
    assert error_of(app, body(TOOL_TURNS)) == NO_TOOLS_DEFINED
    assert error_of(app, body(TOOL_TURNS, tools=[])) == (
        "Requests which include tool_use or tool_result blocks must define tools."
    )
    assert post(app, body(TOOL_TURNS, tools=[TOOL]))[0] == 200


def test_unanswered_tool_use_gets_the_apis_400(app: WireApp) -> None:
    messages = [*TOOL_TURNS[:2], {"role": "user", "content": [{**RESULT, "tool_use_id": "other"}]}]
    assert error_of(app, body(messages, tools=[TOOL])) == (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the "
        "next message."
    )
    dangling = body(TOOL_TURNS[:2], tools=[TOOL])
    assert error_of(app, dangling).startswith("messages.1: `tool_use` ids were found without")
    twice = body([*TOOL_TURNS[:2], {"role": "assistant", "content": "x"}], tools=[TOOL])
    assert error_of(app, twice).startswith("messages.1: `tool_use` ids were found without")


def test_text_after_tool_use_gets_the_apis_400(app: WireApp) -> None:
    messages = [
        *TOOL_TURNS[:2],
        {"role": "user", "content": [{"type": "text", "text": "hi"}, RESULT]},
    ]
    assert error_of(app, body(messages, tools=[TOOL])) == (
        "messages.2: Did not find 1 tool_result block(s) at the beginning of this message. "
        "Messages following tool_use blocks must begin with a matching number of tool_result "
        "blocks."
    )


def test_stray_tool_result_is_refused(app: WireApp) -> None:
    messages = [{"role": "user", "content": [RESULT]}]
    assert "unexpected `tool_use_id` found in `tool_result` blocks: toolu_1" in error_of(
        app, body(messages, tools=[TOOL])
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"model": "m", "messages": [{"role": "user", "content": "x"}]},
            "max_tokens: Field required",
        ),
        (
            {"max_tokens": 5, "messages": [{"role": "user", "content": "x"}]},
            "model: Field required",
        ),
        ({"model": "m", "max_tokens": 5}, "messages: Field required"),
        (body([]), "messages: at least one message is required"),
        (
            body([{"role": "tool", "content": "x"}]),
            "messages.0.role: Input should be 'user', 'assistant' or 'system'",
        ),
        (
            body([{"role": "user", "content": "x"}], max_tokens=0),
            "max_tokens: Input should be greater than or equal to 1",
        ),
        (
            body([{"role": "user", "content": "x"}], tools=[{**TOOL, "name": "get.weather"}]),
            "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
        ),
        (
            body([{"role": "user", "content": "x"}], tools=[{**TOOL, "name": "x" * 65}]),
            "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
        ),
        (
            body([{"role": "user", "content": "x"}], tools=[{"name": "f"}]),
            "tools.0.custom.input_schema: Field required",
        ),
        (
            body([{"role": "user", "content": "x"}], tools=[TOOL, TOOL]),
            "tools: Tool names must be unique. Duplicate names: get_weather",
        ),
        (
            body(
                [{"role": "user", "content": "x"}],
                tools=[TOOL],
                tool_choice={"type": "tool", "name": "nope"},
            ),
            "Tool 'nope' not found in provided tools",
        ),
        (
            body([{"role": "user", "content": [USE]}], tools=[TOOL]),
            "messages.0.content.0: tool_use blocks can only be in assistant messages",
        ),
        (body([{"role": "user", "content": "x"}], tools={}), "tools: Input should be a valid list"),
        (
            body([{"role": "user", "content": "x"}], tools=["f"]),
            "tools.0: Input should be a valid dictionary or object",
        ),
        (
            body([{"role": "user", "content": "x"}], tools=[{"input_schema": {"type": "object"}}]),
            "tools.0.custom.name: Field required",
        ),
        (
            body(
                [{"role": "user", "content": "x"}],
                tools=[{**TOOL, "input_schema": {"type": "array"}}],
            ),
            "tools.0.custom.input_schema.type: Input should be 'object'",
        ),
        (
            {**body([{"role": "user", "content": "x"}]), "model": 5},
            "model: Input should be a valid string",
        ),
        (body("x"), "messages: Input should be a valid list"),  # type: ignore[arg-type]
        (body(["x"]), "messages.0: Input should be a valid dictionary"),  # type: ignore[list-item]
        (body([{"role": "user"}]), "messages.0.content: Field required"),
        (
            body([{"role": "assistant", "content": [RESULT]}], tools=[TOOL]),
            "messages.0.content.0: tool_result blocks can only be in user messages",
        ),
        (
            body([{"role": "user", "content": "x"}], tools=[TOOL], tool_choice={"type": "some"}),
            "tool_choice: Input tag does not match any of the expected tags: 'auto', 'any', "
            "'tool', 'none'",
        ),
    ],
)
def test_request_validation_messages(app: WireApp, data: dict[str, Any], message: str) -> None:
    assert error_of(app, data) == message


@pytest.mark.parametrize(
    ("blocks", "message"),
    [
        (
            [{"type": "bogus", "text": "x"}],
            "messages.0.content.0: Input tag 'bogus' found using 'type' does not match any of "
            "the expected tags: 'text', 'image', ",
        ),
        ([{"text": "no type"}], "messages.0.content.0.type: Field required"),
        (["just text"], "messages.0.content.0: Input should be a valid dictionary or object"),
        (
            [{"type": "text", "text": "ok"}, {"type": "tool_reference_x"}],
            "messages.0.content.1: Input tag 'tool_reference_x' found using 'type'",
        ),
    ],
)
def test_a_content_block_of_an_unknown_type_is_refused_like_the_api(
    app: WireApp, blocks: list[Any], message: str
) -> None:
    status, answer = post(app, body([{"role": "user", "content": blocks}]))
    assert status == 400 and answer["type"] == "error"
    assert answer["error"]["type"] == "invalid_request_error"
    assert answer["error"]["message"].startswith(message)


def test_every_known_block_type_passes_the_type_check(app: WireApp) -> None:
    for kind in BLOCK_TYPES:
        if kind in ("tool_use", "tool_result"):
            continue  # their own rules apply (pairing, roles)
        role = "assistant" if kind in ("thinking", "redacted_thinking") else "user"
        messages = [{"role": "user", "content": "x"}] if role == "assistant" else []
        block = {"type": kind, "text": "t", "thinking": "t", "signature": "s", "data": "d"}
        answer = post(app, body([*messages, {"role": role, "content": [block]}]))
        assert "Input tag" not in json.dumps(answer[1]), kind


def test_the_sdk_sees_the_unknown_block_refusal_as_a_bad_request() -> None:
    client = fake_anthropic_client(ScriptedModel([reply("never")]))
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(
            model="claude-x",
            max_tokens=10,
            messages=[{"role": "user", "content": [{"type": "bogus"}]}],  # type: ignore[list-item]
        )
    assert info.value.status_code == 400
    assert "Input tag 'bogus'" in str(info.value)


def test_server_tools_count_as_declared_tools(app: WireApp) -> None:
    search = {"type": "web_search_20250305", "name": "web_search"}
    assert post(app, body(TOOL_TURNS, tools=[search, TOOL]))[0] == 200
    only_server = [*TOOL_TURNS[:1], {"role": "assistant", "content": "ok"}]
    assert post(app, body(only_server, tools=[search]))[0] == 200


def test_bad_json_is_an_anthropic_shaped_error(app: WireApp) -> None:
    status, answer = post(app, b"{nope")
    assert status == 400 and answer["type"] == "error"
    assert "invalid JSON" in answer["error"]["message"]


def test_strict_profile_refuses_history_with_undeclared_tools() -> None:
    other = {**TOOL, "name": "get_time"}
    data = body(TOOL_TURNS, tools=[other])
    assert post(WireApp(Canned(KINDS["text"], repeat=True)), data)[0] == 200
    message = error_of(WireApp(Canned(KINDS["text"]), profile="strict"), data)
    assert message == (
        "messages.1.content.0: the history uses tool 'get_weather', which is not declared in "
        "'tools' on this request. Declare every tool the conversation has used (strict profile)."
    )


def test_served_model_sees_the_neutral_request(app: WireApp) -> None:
    canned = Canned(KINDS["tool_call"])  # tool_choice "any": the served model must call
    served = WireApp(canned)
    data = body(
        TOOL_TURNS, tools=[TOOL], system="Be brief.", tool_choice={"type": "any"}, temperature=0.2
    )
    status, answer = post(served, data, path="/v1/messages?beta=true")
    assert status == 200
    assert answer["type"] == "message" and answer["model"] == "claude-x"
    assert [block["type"] for block in answer["content"]] == ["tool_use"]
    assert answer["stop_reason"] == "tool_use"
    assert answer["usage"]["input_tokens"] == 20 and answer["usage"]["output_tokens"] == 7
    seen = canned.requests[0]
    assert seen.tool_names == ("get_weather",)
    assert seen.settings.tool_choice == ToolChoice.required()
    assert seen.settings.extra == {"temperature": 0.2}
    assert isinstance(seen.messages[-1], ToolMessage) and seen.iteration == 2


def test_the_sdk_reads_every_kind_of_answer_streamed_and_not() -> None:
    for kind in ("text", "tool_call", "parallel_calls", "text_and_call", "length"):
        response = KINDS[kind]
        client = fake_anthropic_client(Canned(response, repeat=True))
        plain = client.messages.create(
            model="claude-x", max_tokens=50, messages=[{"role": "user", "content": "q"}]
        )
        with client.messages.stream(
            model="claude-x", max_tokens=50, messages=[{"role": "user", "content": "q"}]
        ) as stream:
            streamed = stream.get_final_message()
        assert streamed.model_dump(exclude={"id"}) == plain.model_dump(exclude={"id"}), kind
        uses = [b for b in plain.content if b.type == "tool_use"]
        assert [u.name for u in uses] == [c.name for c in response.message.tool_calls]
        assert [u.input for u in uses] == [
            json.loads(c.arguments) for c in response.message.tool_calls
        ]
        assert plain.usage.output_tokens == response.usage.output_tokens


def test_sse_frames_on_the_wire() -> None:
    app = WireApp(Canned(KINDS["tool_call"]))
    reply = app.handle(
        "POST",
        "/v1/messages",
        json.dumps(body([{"role": "user", "content": "q"}], stream=True)).encode(),
    )
    assert reply.headers["content-type"].startswith("text/event-stream")
    assert reply.headers["request-id"].startswith("req_")
    frames = [c.decode() for c in reply.chunks]
    assert frames[0].startswith("event: message_start\ndata: {")
    assert frames[2] == 'event: ping\ndata: {"type":"ping"}\n\n'
    assert frames[-1] == 'event: message_stop\ndata: {"type":"message_stop"}\n\n'


@pytest.mark.parametrize(
    ("error", "status", "error_type", "cls"),
    [
        (
            ProviderError("slow down", status=429, retry_after=3, code="rate_limit_error"),
            429,
            "rate_limit_error",
            RateLimited,
        ),
        (
            ProviderError("busy", status=529, code="overloaded_error"),
            529,
            "overloaded_error",
            ProviderError,
        ),
        (ProviderError("broken", status=500), 500, "api_error", ProviderError),
        (ProviderError("bad", status=400), 400, "invalid_request_error", ProviderError),
    ],
)
def test_provider_errors_round_trip_through_the_sdk(
    error: ProviderError, status: int, error_type: str, cls: type[ProviderError]
) -> None:
    app = WireApp(Canned(error))
    _, answer = post(app, body([{"role": "user", "content": "q"}]))
    assert answer == {"type": "error", "error": {"type": error_type, "message": str(error)}}
    model = AnthropicModel(fake_anthropic_client(Canned(error)), "claude-x")
    with pytest.raises(cls) as info:
        model.request(model_request())
    assert info.value.status == status and info.value.code == error_type
    assert str(error) in str(info.value)
    if status == 429:
        assert info.value.retry_after == 3 and info.value.retryable


def test_timeout_and_sdk_retries() -> None:
    with pytest.raises(ProviderTimeout):
        AnthropicModel(fake_anthropic_client(Canned(ProviderTimeout("late"))), "m").request(
            model_request()
        )
    canned = Canned(ProviderError("busy", status=529, code="overloaded_error"), KINDS["text"])
    transport = OpenAIWireTransport(canned)
    client = fake_anthropic_client(transport, max_retries=1)
    client = client.with_options(timeout=5.0)
    answer = AnthropicModel(client, "m").request(model_request())
    assert answer.message.content == KINDS["text"].message.content
    assert len(transport.requests) == 2 and transport.requests[1].retry_count == 1


def test_loopback_server_serves_both_sdks_on_one_port() -> None:
    import openai

    canned = Canned(KINDS["text"], repeat=True)
    with WireServer(canned) as server:
        claude = anthropic.Anthropic(
            base_url=server.url.removesuffix("/v1"), api_key="test", max_retries=0
        )
        answer = claude.messages.create(
            model="c", max_tokens=5, messages=[{"role": "user", "content": "q"}]
        )
        gpt = openai.OpenAI(base_url=server.url, api_key="test", max_retries=0)
        chat = gpt.chat.completions.create(model="g", messages=[{"role": "user", "content": "q"}])
        bad = claude.messages.with_raw_response
        with pytest.raises(anthropic.BadRequestError) as info:
            bad.create(model="c", max_tokens=5, messages=[])
    assert answer.content[0].text == chat.choices[0].message.content  # type: ignore[union-attr]
    assert info.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "messages: at least one message is required",
        },
    }
    assert [r.path.split("?")[0] for r in server.requests] == [
        "/v1/messages",
        "/v1/chat/completions",
        "/v1/messages",
    ]


def test_refusal_and_history_reach_the_served_model() -> None:
    refusal = ModelResponse(
        message=AssistantMessage(refusal="No."), finish_reason="content_filter", usage=usage(1, 1)
    )
    client = fake_anthropic_client(Canned(refusal))
    answer = client.messages.create(
        model="c", max_tokens=5, messages=[{"role": "user", "content": "q"}]
    )
    assert answer.stop_reason == "refusal" and answer.content[0].text == "No."  # type: ignore[union-attr]


def test_the_duplicate_name_check_is_linear_in_the_tools(app: WireApp, bounded: Any) -> None:
    """20,000 tools with two duplicates answer at once (counting each name's occurrences
    in the whole list is quadratic: about 12 s here, 100 s for 60,000 tools)."""
    tools = [{**TOOL, "name": f"tool_{i}"} for i in range(20_000)]
    tools += [{**TOOL, "name": "tool_19999"}, {**TOOL, "name": "tool_10"}]
    with bounded(8.0):
        message = error_of(app, body([{"role": "user", "content": "x"}], tools=tools))
    assert message == "tools: Tool names must be unique. Duplicate names: tool_10"
