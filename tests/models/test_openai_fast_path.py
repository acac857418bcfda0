"""The adapters' SDK fast path sends byte-identical requests to the SDK's own ``create``.

Each request shape the adapters produce is sent twice through the real ``openai``
SDK into a recording httpx2 transport: once by the adapter (fast path: no request
transform) and once by the SDK's path (``_sdk_path``: ``create(**adapter.params(request))``
for a stream, ``with_streaming_response.create`` for a non-streamed answer, which the
adapter reads itself, bounded).
Method, URL, body bytes and every header must match. The fast path posts the
body as bytes joined from the JSON of each history message (encoded once per
run), so growing conversations are checked turn by turn too.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable
from typing import Any

import httpx2
import openai
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from wire_helpers import KINDS, Canned, model_request

from harness.loop import ModelRequest, ModelResponse, ModelSettings
from harness.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from harness.models import OpenAIChatModel, OpenAIResponsesModel, OpenAIWireTransport
from harness.models._openai import _fast
from harness.models._openai._base import OpenAIAdapter
from harness.tools import ToolChoice

CALL = ToolCall(id="call_1", name="get_weather", arguments='{"city": "Zürich"}')
HISTORY: list[Message] = [
    SystemMessage(content="You are terse."),
    UserMessage(content='Weather in Zürich? ☀️ "quoted" \\ back'),
    AssistantMessage(content="Checking.", tool_calls=(CALL,)),
    ToolMessage(tool_call_id="call_1", content='{"temp": 21}', name="get_weather"),
    AssistantMessage(refusal="I can't."),
    AssistantMessage(content="", tool_calls=(CALL.model_copy(update={"id": "call_2"}),)),
    ToolMessage(tool_call_id="call_2", content="error: boom"),
    UserMessage(content="and now?"),
]
TUPLE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "required": ("city",), "properties": {}},
    },
}
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

SHAPES: dict[str, tuple[ModelRequest, dict[str, Any]]] = {
    "minimal": (model_request(tools=[]), {}),
    "tools": (model_request(), {}),
    "history": (model_request(HISTORY), {}),
    "tool_choice_required": (model_request(settings=ModelSettings(tool_choice="required")), {}),
    # the canned answer calls get_weather: the fakes honour a forced tool as providers do
    "tool_choice_name": (model_request(settings=ModelSettings(tool_choice="get_weather")), {}),
    "tool_choice_allowed": (
        model_request(
            settings=ModelSettings(
                tool_choice=ToolChoice.allowed_tools(["get_weather"], mode="required")
            )
        ),
        {},
    ),
    "tool_choice_without_tools": (
        model_request(tools=[], settings=ModelSettings(tool_choice="auto")),
        {},
    ),
    "parallel_false": (model_request(settings=ModelSettings(parallel_tool_calls=False)), {}),
    "structured": (
        model_request(settings=ModelSettings(output_schema=SCHEMA, output_name="city answer")),
        {},
    ),
    "defaults_and_extra": (
        model_request(settings=ModelSettings(extra={"temperature": 0.5, "metadata": {"k": "v"}})),
        {"defaults": {"temperature": 0.1, "max_output_tokens": 64, "top_p": 0.9}},
    ),
    "request_options": (
        model_request(
            settings=ModelSettings(
                extra={
                    "extra_body": {"vendor_flag": True},
                    "extra_headers": {"x-trace": "abc"},
                    "extra_query": {"q": "1"},
                    "timeout": 12.5,
                }
            )
        ),
        {},
    ),
    "not_plain_json": (  # a mapping proxy: the SDK's transform turns it into a dict
        model_request(
            settings=ModelSettings(extra={"metadata": types.MappingProxyType({"a": "b"})})
        ),
        {},
    ),
    "tuple_values": (model_request(tools=[TUPLE_TOOL]), {}),
}
CHAT_ONLY_DEFAULTS = {"max_output_tokens": "max_tokens"}
ADAPTERS: dict[str, type[OpenAIAdapter]] = {
    "chat": OpenAIChatModel,
    "responses": OpenAIResponsesModel,
}


class Recording(OpenAIWireTransport):
    """The wire fake, remembering every request as the SDK sent it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[httpx2.Request] = []

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        self.sent.append(request)
        return super().handle_request(request)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.sent.append(request)
        return await super().handle_async_request(request)


def _wire(request: httpx2.Request) -> tuple[Any, ...]:
    return request.method, str(request.url), request.content, request.headers.multi_items()


def _adjust(api: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    defaults = dict(kwargs.get("defaults") or {})
    if api == "chat":
        defaults = {CHAT_ONLY_DEFAULTS.get(key, key): value for key, value in defaults.items()}
    return {**kwargs, "defaults": defaults}


def _client(transport: Recording, *, is_async: bool) -> Any:
    cls = openai.AsyncOpenAI if is_async else openai.OpenAI
    http_cls = httpx2.AsyncClient if is_async else httpx2.Client
    return cls(
        api_key="sk-test-fast-path",
        base_url="http://harness.test/v1",
        max_retries=0,
        http_client=http_cls(transport=transport),
    )


def _sdk_path(resource: Any, params: dict[str, Any], *, stream: bool) -> None:
    """Send ``params`` the SDK's own way, and read the answer."""
    if stream:
        with resource.create(**params) as events:
            list(events)
    else:
        with resource.with_streaming_response.create(**params) as raw:
            raw.read()


async def _sdk_path_async(resource: Any, params: dict[str, Any], *, stream: bool) -> None:
    """``_sdk_path`` with an async client."""
    if stream:
        async with await resource.create(**params) as events:
            [event async for event in events]
    else:
        async with resource.with_streaming_response.create(**params) as raw:
            await raw.read()


def _sent_both_ways(
    api: str, request: ModelRequest, *, stream: bool, is_async: bool, **kwargs: Any
) -> tuple[tuple[Any, ...], tuple[Any, ...], ModelResponse]:
    """(fast path request, SDK path request, the adapter's response)."""
    transport = Recording(Canned(KINDS["tool_call"], repeat=True))
    model = ADAPTERS[api](
        _client(transport, is_async=is_async), "gpt-test", stream=stream, **kwargs
    )
    params = model.params(request)
    resource = model._resource(model.client)

    async def both_async() -> ModelResponse:
        response = await model.arequest(request)
        await _sdk_path_async(resource, params, stream=stream)
        return response

    if is_async:
        response = asyncio.run(both_async())
    else:
        response = model.request(request)
        _sdk_path(resource, params, stream=stream)
    fast, sdk = transport.sent
    return _wire(fast), _wire(sdk), response


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("api", list(ADAPTERS))
@pytest.mark.parametrize("shape", list(SHAPES))
def test_fast_path_sends_the_same_bytes_as_the_sdk(
    shape: str, api: str, stream: bool, is_async: bool
) -> None:
    request, kwargs = SHAPES[shape]
    fast, sdk, response = _sent_both_ways(
        api, request, stream=stream, is_async=is_async, **_adjust(api, kwargs)
    )
    assert fast == sdk
    assert response.message.tool_calls[0].name == "get_weather"  # the SDK's types were read


def test_responses_reasoning_items_are_sent_back_byte_identically() -> None:
    transport = Recording(Canned(KINDS["tool_call"], repeat=True))
    model = OpenAIResponsesModel(_client(transport, is_async=False), "o-test")
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e=="}
    model._reasoning[("calls", "call_1")] = [reasoning]
    request = model_request(HISTORY)
    params = model.params(request)
    assert reasoning in params["input"]
    model.request(request)
    _sdk_path(model._resource(model.client), params, stream=False)
    fast, sdk = transport.sent
    assert _wire(fast) == _wire(sdk)


def _count_transforms(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    calls: list[Any] = []
    for module in (
        "openai.resources.chat.completions.completions",
        "openai.resources.responses.responses",
    ):
        real = __import__(module, fromlist=["maybe_transform"])
        original = real.maybe_transform
        original_async = real.async_maybe_transform

        def counting(data: Any, tp: Any, _o: Callable[..., Any] = original) -> Any:
            calls.append(tp)
            return _o(data, tp)

        async def counting_async(
            data: Any, tp: Any, _o: Callable[..., Any] = original_async
        ) -> Any:
            calls.append(tp)
            return await _o(data, tp)

        monkeypatch.setattr(real, "maybe_transform", counting)
        monkeypatch.setattr(real, "async_maybe_transform", counting_async)
    return calls


@pytest.mark.parametrize("api", list(ADAPTERS))
def test_the_adapters_skip_the_sdk_transform_for_their_own_params(
    api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    transport = Recording(Canned(KINDS["tool_call"], repeat=True))
    model = ADAPTERS[api](_client(transport, is_async=False), "gpt-test")
    model.request(model_request(HISTORY))  # learns the SDK's plan for this shape
    calls = _count_transforms(monkeypatch)
    for _ in range(3):
        model.request(model_request(HISTORY))
    assert calls == []  # no transform at all once the shape is known
    model.request(
        model_request(settings=ModelSettings(extra={"metadata": types.MappingProxyType({})}))
    )
    assert len(calls) == 1  # a value that is not plain JSON takes the SDK's path


def test_a_subclass_that_overrides_params_trusts_nothing() -> None:
    class Custom(OpenAIChatModel):
        def params(self, request: ModelRequest) -> dict[str, Any]:
            params = super().params(request)
            params["messages"] = [types.MappingProxyType(m) for m in params["messages"]]
            return params

    transport = Recording(Canned(KINDS["tool_call"], repeat=True))
    model = Custom(_client(transport, is_async=False), "gpt-test")
    model.request(model_request(HISTORY))  # the SDK's transform turns the proxies into dicts
    assert b'"role":"system"' in transport.sent[0].content


def test_unknown_params_get_the_sdks_own_error() -> None:
    transport = Recording(Canned(KINDS["tool_call"], repeat=True))
    model = OpenAIChatModel(_client(transport, is_async=False), "gpt-test")
    with pytest.raises(TypeError, match="not_an_argument"):
        model.request(model_request(settings=ModelSettings(extra={"not_an_argument": 1})))
    assert transport.sent == []


def test_plain_json_check() -> None:
    assert _fast.is_plain_json({"a": [1, 2.5, True, None, ("t",)], "b": {"c": "d"}})
    assert not _fast.is_plain_json({"a": types.MappingProxyType({})})
    assert not _fast.is_plain_json({1: "int key"})
    assert not _fast.is_plain_json([object()])
    assert not _fast.is_plain_json(ToolCall(id="x", name="y"))


def test_alias_detection_finds_renamed_keys_anywhere() -> None:
    from typing import Annotated, TypedDict

    from openai._utils import PropertyInfo
    from openai.types.chat.completion_create_params import CompletionCreateParamsBase
    from openai.types.responses.response_create_params import ResponseCreateParamsBase

    class Inner(TypedDict, total=False):
        from_: Annotated[str, PropertyInfo(alias="from")]

    class Outer(TypedDict, total=False):
        items: list[Inner | None]

    assert _fast.has_aliases(Outer)
    assert not _fast.has_aliases(CompletionCreateParamsBase)
    assert not _fast.has_aliases(ResponseCreateParamsBase)


def test_an_sdk_that_renames_keys_turns_the_fast_path_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_fast, "has_aliases", lambda params_type: True)
    calls = _count_transforms(monkeypatch)
    transport = Recording(Canned(KINDS["tool_call"], repeat=True))
    model = OpenAIChatModel(_client(transport, is_async=False), "gpt-test")
    model.request(model_request())
    assert len(calls) == 1


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)


@st.composite
def _histories(draw: st.DrawFn) -> list[Message]:
    messages: list[Message] = [UserMessage(content=draw(_text))]
    for i in range(draw(st.integers(0, 4))):
        calls = tuple(
            ToolCall(id=f"c{i}_{j}", name="get_weather", arguments=draw(_text))
            for j in range(draw(st.integers(0, 2)))
        )
        messages.append(
            AssistantMessage(
                content=draw(st.none() | _text),
                tool_calls=calls,
                refusal=draw(st.none() | _text),
            )
        )
        messages.extend(ToolMessage(tool_call_id=c.id, content=draw(_text)) for c in calls)
    return messages


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    history=_histories(),
    api=st.sampled_from(list(ADAPTERS)),
    stream=st.booleans(),
    extra=st.dictionaries(st.sampled_from(["temperature", "top_p"]), st.floats(0, 1), max_size=2),
)
def test_any_history_is_sent_byte_identically(
    history: list[Message], api: str, stream: bool, extra: dict[str, float]
) -> None:
    request = model_request(history, settings=ModelSettings(extra=extra))
    fast, sdk, _ = _sent_both_ways(api, request, stream=stream, is_async=False)
    assert fast == sdk


def _count_dumps(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Counts the SDK's own body serialisations (``openapi_dumps``)."""
    import openai._base_client as base_client

    calls: list[Any] = []
    original = base_client.openapi_dumps

    def counting(obj: Any) -> bytes:
        calls.append(obj)
        return original(obj)

    monkeypatch.setattr(base_client, "openapi_dumps", counting)
    return calls


@pytest.mark.parametrize("api", list(ADAPTERS))
def test_the_adapters_post_their_own_bytes(api: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_dumps(monkeypatch)
    transport = Recording(Canned(KINDS["tool_call"], repeat=True))
    model = ADAPTERS[api](_client(transport, is_async=False), "gpt-test")
    model.request(model_request(HISTORY))
    assert calls == []  # the body was not serialised by the SDK
    model.request(model_request(settings=ModelSettings(extra={"extra_body": {"x": 1}})))
    assert len(calls) == 1  # extra_body is merged into the body by the SDK: its path


def _turns() -> list[ModelRequest]:
    """A conversation that grows, then goes back to an edited past, then grows again."""
    grown: list[Message] = [SystemMessage(content="Be brief."), UserMessage(content="go ✓")]
    turns: list[ModelRequest] = []
    for i in range(4):
        turns.append(model_request(list(grown)))
        call = ToolCall(id=f"call_{i}", name="get_weather", arguments=f'{{"i": {i}}}')
        grown += [
            AssistantMessage(content=None if i % 2 else f"step {i}", tool_calls=(call,)),
            ToolMessage(tool_call_id=call.id, content=f'{i} "ok" \\ é'),
        ]
    turns.append(model_request([*grown[:4], UserMessage(content="edited")]))
    turns.append(model_request(list(grown)))
    turns.append(model_request(list(grown), settings=ModelSettings(extra={"top_p": 0.5})))
    return turns


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("api", list(ADAPTERS))
def test_a_growing_conversation_is_sent_byte_identically_every_turn(
    api: str, stream: bool, is_async: bool
) -> None:
    transport = Recording(Canned(KINDS["tool_call"], repeat=True))
    model = ADAPTERS[api](_client(transport, is_async=is_async), "gpt-test", stream=stream)
    resource = model._resource(model.client)

    for request in _turns():
        params = model.params(request)
        if is_async:
            asyncio.run(model.arequest(request))
            asyncio.run(_sdk_path_async(resource, params, stream=stream))
        else:
            model.request(request)
            _sdk_path(resource, params, stream=stream)
        fast, sdk = transport.sent[-2:]
        assert _wire(fast) == _wire(sdk)
    model.end_run(completed=True)


def test_replaced_reasoning_items_are_sent_afresh() -> None:
    """A turn answered again with other reasoning items is sent with the new ones."""
    from openai.types.responses import Response

    transport = Recording(Canned(KINDS["tool_call"], repeat=True))
    model = OpenAIResponsesModel(_client(transport, is_async=False), "o-test")
    reasoning = [
        {"type": "reasoning", "id": f"rs_{i}", "summary": [], "encrypted_content": "e=="}
        for i in (1, 2)
    ]
    request = model_request(HISTORY[:4])
    model._reasoning[("calls", "call_1")] = [reasoning[0]]
    model.request(request)
    assert b'"rs_1"' in transport.sent[-1].content
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Zürich"}',
        "status": "completed",
    }
    model._read(Response.model_construct(output=[reasoning[1], call], model="o-test"))
    params = model.params(request)
    model.request(request)
    _sdk_path(model._resource(model.client), params, stream=False)
    fast, sdk = transport.sent[-2:]
    assert b'"rs_2"' in fast.content and b'"rs_1"' not in fast.content
    assert _wire(fast) == _wire(sdk)


def test_values_the_sdk_encoder_refuses_leave_the_body_to_the_sdk() -> None:
    """A value ``json`` cannot write (NaN: ValueError; an object: TypeError) gives no
    fast body, so the SDK encodes the request itself, with its own error."""
    assert _fast.body_bytes(("model",), {"model": "m"}, {}) == b'{"model":"m"}'
    assert _fast.body_bytes(("temperature",), {"temperature": float("nan")}, {}) is None
    assert _fast.body_bytes(("metadata",), {"metadata": object()}, {}) is None


def test_a_post_without_stream_arguments_still_has_a_plan() -> None:
    """An SDK whose ``create`` leaves out ``stream``/``stream_cls`` (unstreamed calls) is
    still served by the fast path; only an argument the plan does not know turns it off."""
    params = {"model": "m", "messages": []}
    posted = _fast._Posted(
        "/chat/completions",
        {"body": {"model": None, "messages": None}, "options": {}, "cast_to": dict},
    )
    plan = _fast._plan(posted, params)
    assert plan is not None and (plan.stream, plan.stream_cls, plan.order) == (
        False,
        None,
        ("model", "messages"),
    )
    posted.arguments["extra_thing"] = 1
    assert _fast._plan(posted, params) is None
