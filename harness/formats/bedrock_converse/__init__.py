"""AWS Bedrock Converse (``POST /model/{modelId}/converse`` and ``/converse-stream``): the
whole format, both sides.

Client side (the adapter over boto3's ``bedrock-runtime`` client): ``request_body``
gives the keyword arguments of ``client.converse`` / ``client.converse_stream``
(``reasoningContent`` blocks sent back with their turn); ``response_from_body`` /
``response_from_events`` / ``response_from_sse`` decode the answer (botocore's parsed
events, or a recorded event-stream body); ``reasoning_blocks`` gives the blocks to send
back; ``error_details`` reads botocore's error. Server side (the wire fake):
``request_from_body`` (or a ``RequestReader``) decodes and checks a request like the API
(``validate_body``: its rules and texts, ``ValidationException``); ``response_body`` /
``response_events`` encode a ``ModelResponse``, ``stream_frames`` writes the events as
``application/vnd.amazon.eventstream`` frames; ``error_for`` and ``response_headers`` give
Bedrock's error answers and headers; ``route_of`` reads the model and operation of a path.
``CODEC`` reads Converse recordings and ``INVOKE_CODEC`` InvokeModel recordings with
Anthropic Messages bodies (read by the Anthropic codec). The names are the same in every
format module of ``harness.formats``.
"""

from __future__ import annotations

from harness.formats.bedrock_converse._codec import (
    CODEC,
    INVOKE_CODEC,
    ROUTE,
    BedrockRoute,
    invoke_events,
    route_of,
    stream_frames,
)
from harness.formats.bedrock_converse._eventstream import (
    CONTENT_TYPE,
    event_frames,
    exception_frame,
    read_frames,
)
from harness.formats.bedrock_converse._prompt import (
    SYSTEM_FIRST,
    prompt_choice,
    prompt_message,
    prompt_pieces,
    prompt_tools,
)
from harness.formats.bedrock_converse._request import (
    HISTORY_KEY,
    NAME,
    ReasoningKey,
    RequestReader,
    cache_point,
    message_key,
    read_request,
    request_body,
    request_from_body,
    tool_choice_from_param,
    tool_choice_param,
    tool_from_param,
    tool_param,
)
from harness.formats.bedrock_converse._response import (
    EVENT_TYPES,
    STOP_REASONS,
    accumulate,
    error_details,
    error_for,
    reasoning_blocks,
    response_body,
    response_events,
    response_from_body,
    response_from_events,
    response_from_sse,
    response_headers,
)
from harness.formats.bedrock_converse._validation import (
    BLOCK_MEMBERS,
    ERROR_TYPES,
    NO_TOOL_CONFIG,
    ConverseWireError,
    validate_body,
)

__all__ = [
    "BLOCK_MEMBERS",
    "CODEC",
    "CONTENT_TYPE",
    "ERROR_TYPES",
    "EVENT_TYPES",
    "HISTORY_KEY",
    "INVOKE_CODEC",
    "NAME",
    "NO_TOOL_CONFIG",
    "ROUTE",
    "STOP_REASONS",
    "SYSTEM_FIRST",
    "BedrockRoute",
    "ConverseWireError",
    "ReasoningKey",
    "RequestReader",
    "accumulate",
    "cache_point",
    "error_details",
    "error_for",
    "event_frames",
    "exception_frame",
    "invoke_events",
    "message_key",
    "prompt_choice",
    "prompt_message",
    "prompt_pieces",
    "prompt_tools",
    "read_frames",
    "read_request",
    "reasoning_blocks",
    "request_body",
    "request_from_body",
    "response_body",
    "response_events",
    "response_from_body",
    "response_from_events",
    "response_from_sse",
    "response_headers",
    "route_of",
    "stream_frames",
    "tool_choice_from_param",
    "tool_choice_param",
    "tool_from_param",
    "tool_param",
    "validate_body",
]
