"""OpenAI Responses API (``POST /v1/responses``, stateless): the whole format, both sides.

Client side (the adapter): ``request_body`` encodes a ``ModelRequest`` (the whole input
each turn, reasoning items sent back in place); ``response_from_body`` /
``response_from_events`` / ``response_from_sse`` decode the answer; ``reasoning_items``
gives the items to send back. Server side (the wire fake): ``request_from_body`` (or a
``RequestReader``, which reads a growing input incrementally) decodes and checks a body
like the API; ``response_body`` / ``response_events`` encode a ``ModelResponse``;
``error_for`` and ``response_headers`` give the API's error answers and headers.
``CODEC`` reads recordings. The names are the same in every format module of
``harness.formats``.
"""

from __future__ import annotations

from harness.formats._openai import error_details, error_for, response_headers
from harness.formats.openai_responses._codec import CODEC, ROUTE
from harness.formats.openai_responses._prompt import (
    SYSTEM_FIRST,
    prompt_choice,
    prompt_message,
    prompt_pieces,
    prompt_tools,
)
from harness.formats.openai_responses._request import (
    HISTORY_KEY,
    NAME,
    ReasoningKey,
    RequestReader,
    message_key,
    request_body,
    request_from_body,
    tool_choice_from_param,
    tool_choice_param,
    tool_from_param,
    tool_param,
    tool_params,
)
from harness.formats.openai_responses._response import (
    final_response,
    reasoning_items,
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
    "ReasoningKey",
    "RequestReader",
    "error_details",
    "error_for",
    "final_response",
    "message_key",
    "prompt_choice",
    "prompt_message",
    "prompt_pieces",
    "prompt_tools",
    "reasoning_items",
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
    "tool_params",
]
