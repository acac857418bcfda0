"""OpenAI Chat Completions (``POST /v1/chat/completions``): the whole format, both sides.

Client side (the adapter): ``request_body`` encodes a ``ModelRequest``;
``response_from_body`` / ``response_from_events`` / ``response_from_sse`` decode the
answer. Server side (the wire fake): ``request_from_body`` (or a ``RequestReader``,
which reads a growing history incrementally) decodes and checks a body like the API;
``response_body`` / ``response_events`` encode a ``ModelResponse``; ``error_for`` and
``response_headers`` give the API's error answers and headers. ``CODEC`` reads
recordings. The names are the same in every format module of ``harness.formats``.

Also here: the format's pieces, each with its pair (``tool_param`` /
``tool_from_param``, ``tool_choice_param`` / ``tool_choice_from_param``,
``message_to_dict`` / ``message_from_dict``: the chat message dicts scenario files use).
"""

from __future__ import annotations

from harness.formats._openai import error_details, error_for, response_headers
from harness.formats.openai_chat._codec import CODEC, ROUTE
from harness.formats.openai_chat._prompt import (
    SYSTEM_FIRST,
    prompt_choice,
    prompt_message,
    prompt_pieces,
    prompt_tools,
)
from harness.formats.openai_chat._request import (
    HISTORY_KEY,
    NAME,
    RequestReader,
    message_from_dict,
    message_to_dict,
    messages_from_dicts,
    messages_to_dicts,
    request_body,
    request_from_body,
    tool_choice_from_param,
    tool_choice_param,
    tool_from_param,
    tool_param,
)
from harness.formats.openai_chat._response import (
    response_body,
    response_events,
    response_from_body,
    response_from_events,
    response_from_sse,
)

__all__ = [
    "CODEC",
    "HISTORY_KEY",
    "NAME",
    "ROUTE",
    "SYSTEM_FIRST",
    "RequestReader",
    "error_details",
    "error_for",
    "message_from_dict",
    "message_to_dict",
    "messages_from_dicts",
    "messages_to_dicts",
    "prompt_choice",
    "prompt_message",
    "prompt_pieces",
    "prompt_tools",
    "request_body",
    "request_from_body",
    "response_body",
    "response_events",
    "response_from_body",
    "response_from_events",
    "response_from_sse",
    "response_headers",
    "tool_choice_from_param",
    "tool_choice_param",
    "tool_from_param",
    "tool_param",
]
