"""The Anthropic Messages cassette codec: recordings read leniently (no API checks).

The system prompt becomes a system message, ``tool_use`` / ``tool_result`` blocks become
tool calls and tool messages, ``input_schema`` the offered tool's schema; ``metadata``,
``stream``, ``cache_control`` and other volatile fields carry no meaning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.formats._codec import FormatCodec, ParsedRequest
from harness.formats.anthropic_messages._request import NAME, read_request, request_body
from harness.formats.anthropic_messages._response import (
    response_from_body,
    response_from_events,
)

__all__ = ["CODEC", "ROUTE"]

ROUTE = "/messages"
"""The endpoint's path after the ``/v1`` prefix."""


def _recorded(body: Any) -> ParsedRequest:
    """A recorded body, read leniently after the checks any reading needs."""
    if not isinstance(body, Mapping):
        raise ValueError(f"the body is {type(body).__name__}, expected a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise ValueError("'messages' must be an array of {role, content} objects")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in (
            "user",
            "assistant",
            "system",  # a mid-conversation addition (tool_addition blocks)
        ):
            raise ValueError(f"messages[{i}] needs role 'user', 'assistant' or 'system'")
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


CODEC = FormatCodec(
    name=NAME,
    path_suffix="/v1" + ROUTE,  # a bare /messages is not taken for Anthropic's
    read=_recorded,
    encode=request_body,
    decode_json=response_from_body,
    decode_events=response_from_events,
)
"""The codec ``harness.formats.codec_for`` finds for ``POST .../v1/messages``."""
