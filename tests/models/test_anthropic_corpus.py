"""Real recorded Anthropic traffic (``cassettes/real/anthropic``, and the ``anthropic``
folder of ``$HARNESS_CORPUS`` or ../shared/corpus) loads, replays and parses.

Every recording in the folder (none is named here) is loaded with vcrpy and replayed by
vcrpy's own matching behind an httpx2 mock transport: through the official SDK
(``messages.create`` / the ``messages.stream`` helper) and through ``AnthropicModel``.
The codec applied to the raw recorded body (JSON, gzip, SSE with pings and padded JSON)
gives the same ``ModelResponse`` as the SDK's parsing; the recorded requests pass the fake
endpoint's validation and read back to neutral histories whose tool results answer the
previous recorded turn.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from vcr import matchers
from vcr.cassette import Cassette
from vcr.request import Request as VcrRequest

from harness.formats.anthropic_messages import (
    CODEC,
    read_request as request_from_body,
    response_from_body as response_from_message,
    response_from_sse,
    validate_body as validate_messages_body,
)
from harness.loop import ModelResponse
from harness.messages import AssistantMessage, ToolMessage
from harness.models import (
    AnthropicModel,
)
from harness.models._anthropic._model import sdk_call_kwargs
from harness.testing._vcr import HarnessSerializer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cassettes"))
from corpus import recordings

PATHS = {p.name: p for p in recordings("anthropic")}
FILES = sorted(PATHS)
pytestmark = [
    pytest.mark.skipif(
        not FILES,
        reason="no Anthropic recordings: cassettes/real/anthropic is empty and there is no "
        "$HARNESS_CORPUS/anthropic",
    ),
    # the recordings name retired models; the SDK warns about those on every call
    pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning"),
]


def _load(name: str) -> Cassette:
    """The recording with vcrpy, through the harness's serializer (stock vcrpy, and the
    variants other projects write: pydantic-ai's typed JSON bodies)."""
    return Cassette.load(
        path=str(PATHS[name]),
        record_mode="none",
        match_on=(matchers.method, matchers.path),
        serializer=HarnessSerializer,
    )


def _header(headers: dict[str, Any], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return ""


def _raw(response: dict[str, Any]) -> bytes:
    body = response["body"]["string"]
    return body if isinstance(body, bytes) else str(body).encode()


def _decoded(response: dict[str, Any]) -> bytes:
    raw = _raw(response)
    return (
        gzip.decompress(raw) if _header(response["headers"], "content-encoding") == "gzip" else raw
    )


def _direct(response: dict[str, Any]) -> ModelResponse:
    """The codec on the raw recorded body."""
    text = _decoded(response)
    content_type = _header(response["headers"], "content-type")
    direct = CODEC.decode_response(200, {"content-type": content_type}, text)
    if content_type.startswith("text/event-stream"):
        assert response_from_sse(text) == direct
    else:
        assert response_from_message(json.loads(text)) == direct
    return direct


def _client(name: str) -> anthropic.Anthropic:
    """An SDK client whose requests vcrpy answers from the recording, in recorded order."""
    cassette = _load(name)

    def handler(request: httpx2.Request) -> httpx2.Response:
        played = cassette.play_response(
            VcrRequest(request.method, str(request.url), request.read(), dict(request.headers))
        )
        headers = {
            k.lower(): ", ".join(map(str, v)) if isinstance(v, list) else str(v)
            for k, v in played["headers"].items()
            if k.lower() not in ("content-length", "transfer-encoding")  # some were reformatted
        }
        status = played["status"]
        code = status if isinstance(status, int) else status["code"]
        return httpx2.Response(code, headers=headers, content=_raw(played))

    return anthropic.Anthropic(
        base_url="https://api.anthropic.com",
        api_key="sk-ant-test",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )


def _bodies(name: str) -> list[dict[str, Any]]:
    return [json.loads(r.body) for r in _load(name).requests]


@pytest.mark.parametrize("name", FILES)
def test_recordings_load_with_vcrpy(name: str) -> None:
    cassette = _load(name)
    assert len(cassette) >= 1
    for request in cassette.requests:
        assert request.method == "POST" and request.path.endswith("/v1/messages")


@pytest.mark.parametrize("name", FILES)
def test_the_codec_parses_like_the_sdk_and_the_adapter(name: str) -> None:
    cassette = _load(name)
    bodies = _bodies(name)
    sdk, via_adapter = _client(name), _client(name)
    for body, response in zip(bodies, cassette.responses, strict=True):
        direct = _direct(response)
        params = {k: v for k, v in body.items() if k != "stream"}
        if body.get("stream"):
            method = sdk.messages.stream
            with method(**sdk_call_kwargs(method, params)) as stream:
                final = stream.get_final_message()
        else:
            final = sdk.messages.create(**sdk_call_kwargs(sdk.messages.create, params))
        assert response_from_message(final) == direct, name
        adapter = AnthropicModel(via_adapter, body["model"], stream=bool(body.get("stream")))
        assert adapter.request(request_from_body(body)) == direct, name
        assert direct.model_name and (direct.message.content or direct.message.tool_calls)


@pytest.mark.parametrize("name", FILES)
def test_recorded_requests_pass_validation_and_read_back_as_histories(name: str) -> None:
    cassette = _load(name)
    previous: ModelResponse | None = None
    for body, response in zip(_bodies(name), cassette.responses, strict=True):
        names = validate_messages_body(body, profile="strict")
        request = request_from_body(body)
        assert request.tool_names == tuple(names)
        if previous is not None and previous.message.tool_calls:
            # the next recorded request answers the previous recorded tool calls, in order
            answered = [m.tool_call_id for m in request.messages if isinstance(m, ToolMessage)]
            assert answered[-len(previous.message.tool_calls) :] == [
                c.id for c in previous.message.tool_calls
            ]
            sent_back = [m for m in request.messages if isinstance(m, AssistantMessage)][-1]
            assert sent_back.tool_calls == previous.message.tool_calls
        previous = _direct(response)


def test_known_facts_of_the_recordings() -> None:
    if "messages_stream_tool_use_then_result.yaml" not in FILES:
        pytest.skip("the streamed recording is not in this corpus")
    cassette = _load("messages_stream_tool_use_then_result.yaml")
    first, second = (_direct(r) for r in cassette.responses[:2])
    raw = _decoded(cassette.responses[0]).decode()
    assert "event: ping" in raw and '"partial_json":""}  ' in raw  # pings and padded JSON
    assert [c.name for c in first.message.tool_calls] == ["fixed_version"]
    assert first.message.tool_calls[0].arguments == "{}"
    assert first.finish_reason == "tool_calls" and first.usage.input_tokens == 563
    assert second.finish_reason == "stop" and second.message.content


def test_known_facts_of_the_project_recordings() -> None:
    """cassettes/real/anthropic: two parallel tool_use blocks with empty input streamed after
    text; a hand-written history (``call_1``) answered by a gzip body."""
    name = "messages_stream_two_parallel_empty_tool_use_llm_anthropic.yaml"
    if name not in FILES:
        pytest.skip(f"{name} is not among the recordings")
    first, second = (_direct(r) for r in _load(name).responses[:2])
    assert [c.name for c in first.message.tool_calls] == ["pelican_name_generator"] * 2
    assert [c.arguments for c in first.message.tool_calls] == ["{}", "{}"]
    assert first.message.content and first.finish_reason == "tool_calls"
    assert "Charles" in (second.message.content or "") and second.finish_reason == "stop"
    history = _load("messages_tool_result_history_gzip_openllmetry.yaml")
    (answer,) = (_direct(r) for r in history.responses)
    assert [c.name for c in answer.message.tool_calls] == ["get_time"]
    assert json.loads(answer.message.tool_calls[0].arguments) == {"timezone": "America/Los_Angeles"}
