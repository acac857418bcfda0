"""The Anthropic Messages cassette codec: recordings read leniently (no API checks)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.formats._codec import Codec, ParsedRequest
from harness.formats.anthropic_messages._request import NAME, read_request, request_body
from harness.formats.anthropic_messages._response import (
    response_from_body,
    response_from_events,
)
from harness.loop import ModelRequest, ModelResponse

__all__ = ["CODEC", "ROUTE", "MessagesCodec"]

ROUTE = "/messages"
"""The endpoint's path after the ``/v1`` prefix."""


class MessagesCodec(Codec):
    """``POST /v1/messages`` (a query such as ``?beta=true`` is ignored).

    The system prompt becomes a system message, ``tool_use`` / ``tool_result`` blocks
    become tool calls and tool messages, ``input_schema`` the offered tool's schema;
    ``metadata``, ``stream``, ``cache_control`` and other volatile fields carry no meaning.
    """

    name = NAME

    def handles(self, method: str, path: str) -> bool:
        return method.upper() == "POST" and path.split("?", 1)[0].rstrip("/").endswith(
            "/v1" + ROUTE
        )

    def parse_request(self, body: Mapping[str, Any]) -> ParsedRequest:
        if not isinstance(body, Mapping):
            raise ValueError(f"the body is {type(body).__name__}, expected a JSON object")
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise ValueError("'messages' must be an array of {role, content} objects")
        for i, message in enumerate(messages):
            if not isinstance(message, Mapping) or message.get("role") not in (
                "user",
                "assistant",
            ):
                raise ValueError(f"messages[{i}] needs role 'user' or 'assistant'")
        tools = body.get("tools")
        if tools is not None and not isinstance(tools, list):
            raise ValueError("'tools' must be an array of tool definitions")
        request = read_request(body)
        model = body.get("model")
        return ParsedRequest(
            model=str(model) if model is not None else None,
            messages=tuple(request.messages),
            tools=tuple(request.tools),
            stream=body.get("stream") is True,
            tool_choice=request.settings.tool_choice,
        )

    def encode_request(self, request: ModelRequest, *, model: str, stream: bool) -> dict[str, Any]:
        return request_body(request, model=model, stream=stream)

    def decode_json(self, data: Any) -> ModelResponse:
        return response_from_body(data)

    def decode_events(self, events: list[Any]) -> ModelResponse:
        return response_from_events(events)


CODEC = MessagesCodec()
"""The codec instance ``harness.formats.codec_for`` finds for Anthropic Messages requests."""
