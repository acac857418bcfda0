"""Anthropic Messages (``POST /v1/messages``): the whole format, both sides.

Client side (the adapter): ``request_body`` encodes a ``ModelRequest`` (thinking blocks
sent back with their turn); ``response_from_body`` / ``response_from_events`` /
``response_from_sse`` decode the answer; ``thinking_blocks`` gives the blocks to send
back; ``error_details`` reads an error body. Server side (the wire fake):
``request_from_body`` (or a ``RequestReader``) decodes and checks a body like the API
(``validate_body``: its rules and texts); ``response_body`` / ``response_events``
encode a ``ModelResponse``; ``error_for`` and ``response_headers`` give the API's error
answers (Anthropic's shape) and headers. ``read_request`` reads a recorded body
leniently and ``CODEC`` reads recordings. The names are the same in every format
module of ``harness.formats``.
"""

from __future__ import annotations

from harness.formats.anthropic_messages._codec import CODEC, ROUTE
from harness.formats.anthropic_messages._native import BETAS, required_betas
from harness.formats.anthropic_messages._prompt import (
    SYSTEM_FIRST,
    prompt_choice,
    prompt_message,
    prompt_pieces,
    prompt_tools,
)
from harness.formats.anthropic_messages._request import (
    DEFAULT_MAX_TOKENS,
    HISTORY_KEY,
    NAME,
    RequestReader,
    ThinkingKey,
    message_key,
    read_request,
    request_body,
    request_from_body,
    tool_choice_from_param,
    tool_choice_param,
    tool_from_param,
    tool_param,
)
from harness.formats.anthropic_messages._response import (
    STOP_REASONS,
    accumulate,
    error_details,
    error_for,
    response_body,
    response_events,
    response_from_body,
    response_from_events,
    response_from_sse,
    response_headers,
    thinking_blocks,
)
from harness.formats.anthropic_messages._validation import (
    BLOCK_TYPES,
    NO_TOOLS_DEFINED,
    MessagesWireError,
    validate_body,
)

__all__ = [
    "BETAS",
    "BLOCK_TYPES",
    "CODEC",
    "DEFAULT_MAX_TOKENS",
    "HISTORY_KEY",
    "NAME",
    "NO_TOOLS_DEFINED",
    "ROUTE",
    "STOP_REASONS",
    "SYSTEM_FIRST",
    "MessagesWireError",
    "RequestReader",
    "ThinkingKey",
    "accumulate",
    "error_details",
    "error_for",
    "message_key",
    "prompt_choice",
    "prompt_message",
    "prompt_pieces",
    "prompt_tools",
    "read_request",
    "request_body",
    "request_from_body",
    "required_betas",
    "response_body",
    "response_events",
    "response_from_body",
    "response_from_events",
    "response_from_sse",
    "response_headers",
    "thinking_blocks",
    "tool_choice_from_param",
    "tool_choice_param",
    "tool_from_param",
    "tool_param",
    "validate_body",
]
