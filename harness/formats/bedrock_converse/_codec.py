"""The Bedrock cassette codecs and routes: Converse (and ConverseStream) recordings read
leniently, and InvokeModel recordings whose body is Anthropic's, read by the Anthropic
Messages codec.

Bedrock puts the model in the path (``/model/{modelId}/converse``, ``.../converse-stream``,
``.../invoke``, ``.../invoke-with-response-stream``, the id URL-encoded) and answers a
streamed call in the binary event-stream framing: ``route_of`` reads a path,
``stream_frames`` writes the frames, and both codecs read a recorded stream from its
bytes or their base64 text.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

from harness.formats._codec import Codec, ParsedRequest, error_from
from harness.formats._json import SSEEvent
from harness.formats.anthropic_messages import CODEC as MESSAGES_CODEC
from harness.formats.bedrock_converse._eventstream import (
    CONTENT_TYPE,
    event_frames,
    is_event_stream,
    read_frames,
    stream_bytes,
)
from harness.formats.bedrock_converse._request import NAME, read_request, request_body
from harness.formats.bedrock_converse._response import (
    response_from_body,
    response_from_events,
)
from harness.loop import ModelRequest, ModelResponse

__all__ = [
    "CODEC",
    "INVOKE_CODEC",
    "ROUTE",
    "BedrockRoute",
    "invoke_events",
    "route_of",
    "stream_frames",
]

ROUTE = "/model/{modelId}/converse"
"""The endpoint's path (``/converse-stream`` for ConverseStream); the model id is in it."""

_PATH = re.compile(
    r"/model/(?P<model>[^/]+)/(?P<operation>converse-stream|converse|"
    r"invoke-with-response-stream|invoke)/?$"
)


@dataclasses.dataclass(frozen=True, slots=True)
class BedrockRoute:
    """What a Bedrock Runtime path says."""

    model: str
    """The model id (or inference profile, or ARN), URL-decoded."""
    operation: str
    """``converse``, ``converse-stream``, ``invoke`` or ``invoke-with-response-stream``."""

    @property
    def stream(self) -> bool:
        """The operation streams its answer (in event-stream frames)."""
        return self.operation in ("converse-stream", "invoke-with-response-stream")

    @property
    def converse(self) -> bool:
        """A Converse operation (else InvokeModel, whose body is the model's own)."""
        return self.operation.startswith("converse")

    def operation_input(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The operation's input of an HTTP body: the body and the path's ``modelId``."""
        return {**body, "modelId": self.model}


def route_of(path: str) -> BedrockRoute | None:
    """The Bedrock Runtime operation of a request path (``None`` for any other path)."""
    match = _PATH.search(path.split("?", 1)[0])
    if match is None:
        return None
    return BedrockRoute(model=unquote(match["model"]), operation=match["operation"])


def stream_frames(
    events: Iterable[SSEEvent], route: BedrockRoute | None = None
) -> tuple[str, list[bytes]]:
    """The ``content-type`` and the frames of a streamed answer (one chunk per event; every
    streamed operation frames alike, whatever its ``route``)."""
    return CONTENT_TYPE, event_frames(events)


def _recorded(body: Any) -> ParsedRequest:
    """A recorded body, read leniently after the checks any reading needs."""
    if not isinstance(body, Mapping):
        raise ValueError(f"the body is {type(body).__name__}, expected a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise ValueError("'messages' must be an array of {role, content} objects")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
            raise ValueError(f"messages[{i}] needs role 'user' or 'assistant'")
        if not isinstance(message.get("content"), list):
            raise ValueError(f"messages[{i}].content must be an array of content blocks")
    request = read_request(body)
    model = body.get("modelId")
    return ParsedRequest(
        model=str(model) if model is not None else None,
        messages=tuple(request.messages),
        tools=tuple(request.tools),
        tool_choice=request.settings.tool_choice,
    )


class ConverseCodec(Codec):
    """Reads and writes Converse recordings (``POST /model/{id}/converse[-stream]``)."""

    name = NAME
    compared_fields = frozenset({"messages", "system", "toolConfig"})
    volatile_fields = frozenset({"requestMetadata", "performanceConfig"})

    def handles(self, method: str, path: str) -> bool:
        route = route_of(path)
        return method.upper() == "POST" and route is not None and route.converse

    def parse_request(self, body: Mapping[str, Any]) -> ParsedRequest:
        return _recorded(body)

    def model_of(self, path: str) -> str | None:
        route = route_of(path)
        return route.model if route is not None else None

    def encode_request(self, request: ModelRequest, *, model: str, stream: bool) -> dict[str, Any]:
        body = request_body(request, model=model, stream=stream)
        body.pop("modelId")  # in the path, not the body
        return body

    def decode_json(self, data: Any) -> ModelResponse:
        return response_from_body(data)

    def decode_events(self, events: list[Any]) -> ModelResponse:
        return response_from_events(events)

    def decode_response(
        self, status: int, headers: Mapping[str, str], body: bytes
    ) -> ModelResponse:
        """The recorded answer: JSON, or an event stream (bytes, or base64 text)."""
        if status >= 400:
            raise error_from(status, body)
        raw = stream_bytes(body)
        if is_event_stream(headers, raw):
            frames = read_frames(raw)
            return response_from_events((name, payload) for _kind, name, payload in frames)
        return self.decode_json(json.loads(body))

    def __repr__(self) -> str:
        return f"ConverseCodec({self.name!r})"


CODEC = ConverseCodec()
"""The codec ``harness.formats.codec_for`` finds for ``POST /model/{id}/converse``."""


def invoke_events(body: bytes | str) -> list[Any]:
    """The Anthropic Messages events of an InvokeModelWithResponseStream answer: each
    ``chunk`` frame's ``bytes`` (base64 JSON) decoded; an exception frame raises."""
    events: list[Any] = []
    for kind, name, payload in read_frames(stream_bytes(body)):
        if kind == "exception":
            message = payload.get("message") if isinstance(payload, Mapping) else payload
            raise error_from(400, json.dumps({"message": message, "code": name}).encode())
        chunk = payload.get("bytes") if isinstance(payload, Mapping) else None
        if isinstance(chunk, str):
            events.append(json.loads(base64.b64decode(chunk)))
    return events


class InvokeAnthropicCodec(Codec):
    """InvokeModel recordings with Anthropic Messages bodies (``anthropic_version``
    ``bedrock-2023-05-31``): the Anthropic codec reads them; the stream is event-stream
    frames whose ``chunk`` events carry Anthropic's events, base64-encoded."""

    name = MESSAGES_CODEC.name
    compared_fields = MESSAGES_CODEC.compared_fields
    volatile_fields = MESSAGES_CODEC.volatile_fields | {"anthropic_version"}

    def handles(self, method: str, path: str) -> bool:
        route = route_of(path)
        return method.upper() == "POST" and route is not None and not route.converse

    def parse_request(self, body: Mapping[str, Any]) -> ParsedRequest:
        if isinstance(body, Mapping) and "messages" not in body:
            raise ValueError(
                "not an Anthropic Messages body (InvokeModel bodies are the model's own: "
                "the harness reads Anthropic's)"
            )
        return MESSAGES_CODEC.parse_request(body)

    def model_of(self, path: str) -> str | None:
        route = route_of(path)
        return route.model if route is not None else None

    def encode_request(self, request: ModelRequest, *, model: str, stream: bool) -> dict[str, Any]:
        body = MESSAGES_CODEC.encode_request(request, model=model, stream=False)
        body.pop("model", None)
        return {"anthropic_version": "bedrock-2023-05-31", **body}

    def decode_json(self, data: Any) -> ModelResponse:
        return MESSAGES_CODEC.decode_json(data)

    def decode_events(self, events: list[Any]) -> ModelResponse:
        return MESSAGES_CODEC.decode_events(events)

    def decode_response(
        self, status: int, headers: Mapping[str, str], body: bytes
    ) -> ModelResponse:
        if status >= 400:
            raise error_from(status, body)
        raw = stream_bytes(body)
        if is_event_stream(headers, raw):
            return self.decode_events(invoke_events(raw))
        return self.decode_json(json.loads(body))

    def __repr__(self) -> str:
        return f"InvokeAnthropicCodec({self.name!r})"


INVOKE_CODEC = InvokeAnthropicCodec()
"""The codec for ``POST /model/{id}/invoke[-with-response-stream]`` with Anthropic bodies."""
