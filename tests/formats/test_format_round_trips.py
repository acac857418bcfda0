"""Round trips through each wire format, both sides.

- neutral -> request body -> neutral: what an adapter encodes, the fake (and a
  cassette) reads back to the same request (up to what the format carries);
- response -> neutral -> response: what the fake serves, JSON or events, an adapter
  reads back to the same answer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from format_strategies import FORMATS, carried, requests, responses
from hypothesis import HealthCheck, given, settings, strategies as st

from harness.formats import IdSource, WireRequest, codec_for, wire_formats
from harness.loop import ModelRequest, ModelResponse

BY_NAME = {f.NAME: f for f in wire_formats()}
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", FORMATS)
@SETTINGS
@given(data=st.data())
def test_a_request_body_reads_back_to_the_request(name: str, data: st.DataObject) -> None:
    fmt = BY_NAME[name]
    request: ModelRequest = data.draw(requests(name))
    body = json.loads(json.dumps(fmt.request_body(request, model="m-1")))  # over the wire
    back = fmt.request_from_body(body)  # the fake's reading, with the API's checks
    assert back.model == "m-1" and back.stream is False
    assert back.request == carried(request, name)
    parsed = fmt.CODEC.parse_request(body)  # a recording of it
    assert list(parsed.messages) == list(back.request.messages)
    assert list(parsed.tools) == list(back.request.tools)
    assert parsed.tool_choice == back.request.settings.tool_choice


@pytest.mark.parametrize("name", FORMATS)
@SETTINGS
@given(data=st.data())
def test_a_streamed_request_says_so(name: str, data: st.DataObject) -> None:
    fmt = BY_NAME[name]
    request: ModelRequest = data.draw(requests(name))
    body = json.loads(json.dumps(fmt.request_body(request, model="m", stream=True)))
    assert fmt.request_from_body(body).stream is True
    assert codec_for("POST", f"/v1{fmt.ROUTE}") is fmt.CODEC


def _served(name: str, request: ModelRequest) -> WireRequest:
    fmt = BY_NAME[name]
    body = json.loads(json.dumps(fmt.request_body(request, model="served-model", stream=True)))
    if name == "openai-chat":
        body["stream_options"] = {"include_usage": True}
    return fmt.request_from_body(body)


def _expected(response: ModelResponse) -> ModelResponse:
    return ModelResponse(
        message=response.message,
        finish_reason=response.finish_reason,
        usage=response.usage,
        model_name="served-model",
    )


@pytest.mark.parametrize("name", FORMATS)
@SETTINGS
@given(data=st.data(), chunk_chars=st.integers(1, 9), max_chunks=st.integers(1, 64))
def test_what_the_fake_serves_reads_back_to_the_answer(
    name: str, data: st.DataObject, chunk_chars: int, max_chunks: int
) -> None:
    fmt = BY_NAME[name]
    response: ModelResponse = data.draw(responses(name))
    wire = _served(name, data.draw(requests(name)))
    body = json.loads(json.dumps(fmt.response_body(wire, response, IdSource())))
    assert fmt.response_from_body(body) == _expected(response)
    events = fmt.response_events(
        wire, response, IdSource(), chunk_chars=chunk_chars, max_chunks=max_chunks
    )
    payloads: list[Any] = [json.loads(json.dumps(d)) for _, d in events if d != "[DONE]"]
    assert fmt.response_from_events(payloads) == _expected(response)
    raw = b"".join(_frame(e, d) for e, d in events)
    assert fmt.response_from_sse(raw) == _expected(response)
    headers = {"content-type": "text/event-stream"}
    assert fmt.CODEC.decode_response(200, headers, raw) == _expected(response)


def _frame(event: str | None, data: Any) -> bytes:
    from harness.formats._json import sse

    return sse(data, event)
