"""The Gemini cassette codec: recordings of ``generateContent`` and
``streamGenerateContent`` (Gemini API and Vertex AI paths), read leniently.

The model is the path's; a streamed answer is server-sent events (``alt=sse``) or one
JSON array; an error answer is Google's ``{"error": {"code", "message", "status"}}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness.formats._codec import Codec, ParsedRequest
from harness.formats._json import body_content_type, is_sse, sse_data
from harness.formats.gemini_generate._request import NAME, read_request, request_body
from harness.formats.gemini_generate._response import (
    provider_error,
    response_from_body,
    response_from_events,
)
from harness.formats.gemini_generate._wire import get, route_of
from harness.loop import ModelRequest, ModelResponse

__all__ = ["CODEC", "ROUTE", "GeminiCodec"]

ROUTE = "/models/{model}:generateContent"
"""The endpoint's path after the version prefix (``:streamGenerateContent`` streams)."""


def _recorded(body: Any) -> ParsedRequest:
    """A recorded body, read leniently after the checks any reading needs."""
    if not isinstance(body, Mapping):
        raise ValueError(f"the body is {type(body).__name__}, expected a JSON object")
    contents = get(body, "contents")
    if not isinstance(contents, list):
        raise ValueError("'contents' must be an array of {role, parts} objects")
    for i, content in enumerate(contents):
        if not isinstance(content, Mapping) or not isinstance(get(content, "parts"), list):
            raise ValueError(f"contents[{i}] needs 'parts', an array of parts")
    request = read_request(body)
    model = body.get("model")
    return ParsedRequest(
        model=str(model) if isinstance(model, str) else None,
        messages=tuple(request.messages),
        tools=tuple(request.tools),
        tool_choice=request.settings.tool_choice,
    )


class GeminiCodec(Codec):
    """Reads and writes ``generateContent`` recordings (the model is in the path)."""

    name = NAME
    compared_fields = frozenset(
        {
            "contents",
            "systemInstruction",
            "system_instruction",
            "tools",
            "toolConfig",
            "tool_config",
        }
    )
    volatile_fields = frozenset({"labels", "safetySettings", "safety_settings"})

    def handles(self, method: str, path: str) -> bool:
        return method.upper() == "POST" and route_of(path) is not None

    def model_of(self, path: str) -> str | None:
        """The model the path names."""
        route = route_of(path)
        return route.model if route is not None else None

    def parse_request(self, body: Mapping[str, Any]) -> ParsedRequest:
        return _recorded(body)

    def encode_request(self, request: ModelRequest, *, model: str, stream: bool) -> dict[str, Any]:
        return request_body(request, model=model, stream=stream)

    def decode_json(self, data: Any) -> ModelResponse:
        return response_from_body(data)

    def decode_events(self, events: list[Any]) -> ModelResponse:
        return response_from_events(events)

    def decode_response(
        self, status: int, headers: Mapping[str, str], body: bytes
    ) -> ModelResponse:
        """The recorded answer: JSON, a JSON array of chunks, or server-sent events; an
        error status raises the ``ProviderError`` of Google's error body."""
        if status >= 400:
            try:
                data = json.loads(body)
            except (ValueError, UnicodeDecodeError):
                data = None
            raise provider_error(status, data)
        if is_sse(headers, body) and body_content_type(body) != "application/json":
            return self.decode_events(sse_data(body))
        return self.decode_json(json.loads(body))

    def __repr__(self) -> str:
        return f"GeminiCodec({self.name!r})"


CODEC = GeminiCodec()
"""The codec ``harness.formats.codec_for`` finds for ``POST .../models/{m}:generateContent``."""
