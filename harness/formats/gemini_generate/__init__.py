"""Gemini ``generateContent`` / ``streamGenerateContent`` (Gemini API and Vertex AI):
the whole format, both sides.

Client side (the adapter): ``request_body`` encodes a ``ModelRequest`` (the operation's
input: ``model`` and the HTTP body, ``http_body``; a model turn's parts sent back as the
API sent them, thought signatures included); ``response_from_body`` /
``response_from_events`` / ``response_from_sse`` decode the answer; ``model_parts``
gives the parts to send back; ``error_details`` reads an error body. Server side (the
wire fake): ``request_from_body`` (or a ``RequestReader``) decodes and checks a body
like the API (``validate_body``: its rules and texts); ``route_of`` reads the path
(model, streaming, ``alt=sse``); ``response_body`` / ``response_events`` /
``stream_frames`` encode a ``ModelResponse``; ``error_for`` and ``response_headers``
give the API's error answers (Google's shape) and headers. ``CODEC`` reads recordings.
The names are the same in every format module of ``harness.formats``.
"""

from __future__ import annotations

from harness.formats.gemini_generate._codec import CODEC, ROUTE
from harness.formats.gemini_generate._contents import (
    SYNTHETIC_ID_PREFIX,
    call_id,
    is_synthetic,
)
from harness.formats.gemini_generate._prompt import (
    SYSTEM_FIRST,
    cache_entry,
    prompt_choice,
    prompt_message,
    prompt_pieces,
    prompt_tools,
    with_cached_content,
)
from harness.formats.gemini_generate._request import (
    HISTORY_KEY,
    NAME,
    RequestReader,
    http_body,
    request_body,
    request_from_body,
)
from harness.formats.gemini_generate._response import (
    FINISH_REASONS_MAP,
    error_details,
    error_for,
    model_parts,
    response_body,
    response_events,
    response_from_body,
    response_from_events,
    response_from_sse,
    response_headers,
    stream_frames,
)
from harness.formats.gemini_generate._tools import (
    HOSTED_TOOLS,
    tool_choice_from_param,
    tool_choice_param,
    tool_from_param,
    tool_param,
)
from harness.formats.gemini_generate._validation import (
    STATUS_NAMES,
    GeminiWireError,
    signature_for,
)
from harness.formats.gemini_generate._wire import (
    GeminiRoute,
    route_of,
    same_signature,
)

__all__ = [
    "CODEC",
    "FINISH_REASONS_MAP",
    "HISTORY_KEY",
    "HOSTED_TOOLS",
    "NAME",
    "ROUTE",
    "STATUS_NAMES",
    "SYNTHETIC_ID_PREFIX",
    "SYSTEM_FIRST",
    "GeminiRoute",
    "GeminiWireError",
    "RequestReader",
    "cache_entry",
    "call_id",
    "error_details",
    "error_for",
    "http_body",
    "is_synthetic",
    "model_parts",
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
    "route_of",
    "same_signature",
    "signature_for",
    "stream_frames",
    "tool_choice_from_param",
    "tool_choice_param",
    "tool_from_param",
    "tool_param",
    "with_cached_content",
]
