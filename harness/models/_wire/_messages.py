"""Anthropic Messages on the wire: ``POST /v1/messages`` parsing, JSON and SSE rendering.

The format itself is the codec's (``harness.models._anthropic._codec``); this module adds
the API's validation, ids, headers and the Anthropic error shape.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from harness._errors import ProviderError, ProviderTimeout
from harness.loop import ModelResponse
from harness.models._anthropic._codec import message_body, message_events, request_from_body
from harness.models._wire._common import IdSource, WireRequest, sse
from harness.models._wire._errors import WireError, provider_error_to_wire
from harness.models._wire._messages_validation import MessagesWireError, validate_messages_body
from harness.models._wire._validation import Profile

__all__ = [
    "is_messages_route",
    "messages_error",
    "messages_headers",
    "parse_messages_request",
    "render_message",
    "stream_message",
]

_ERROR_TYPES = frozenset(
    {
        "invalid_request_error",
        "authentication_error",
        "billing_error",
        "permission_error",
        "not_found_error",
        "request_too_large",
        "rate_limit_error",
        "api_error",
        "timeout_error",
        "overloaded_error",
    }
)


def is_messages_route(route: str) -> bool:
    """Whether a route (``/v1`` prefix and query stripped) is the Messages endpoint."""
    return route in ("/messages", "/v1/messages")


def parse_messages_request(body: Any, *, profile: Profile = "default") -> WireRequest:
    """Validate a Messages request body like the API; ``MessagesWireError`` if invalid."""
    if not isinstance(body, Mapping):
        raise MessagesWireError(
            400, "There was an error parsing the body of your request: invalid JSON"
        )
    validate_messages_body(body, profile=profile)
    return WireRequest(
        model=str(body["model"]),
        request=request_from_body(body),
        stream=bool(body.get("stream")),
        body=body,
    )


def render_message(wire: WireRequest, response: ModelResponse, ids: IdSource) -> dict[str, Any]:
    """The ``message`` JSON for one model response."""
    return message_body(response, model=wire.model, message_id=ids.next("msg_"))


def stream_message(
    wire: WireRequest, response: ModelResponse, ids: IdSource, *, chunk_chars: int = 8
) -> list[bytes]:
    """The SSE events of one response, one ``event:`` + ``data:`` frame each."""
    events = message_events(
        response, model=wire.model, message_id=ids.next("msg_"), chunk_chars=chunk_chars
    )
    return [sse(data, event=name) for name, data in events]


def messages_error(exc: ProviderError | WireError) -> MessagesWireError:
    """A served model's ``ProviderError`` (or an OpenAI-shaped wire error) as the API's error."""
    if isinstance(exc, MessagesWireError):
        return exc
    wire = exc if isinstance(exc, WireError) else provider_error_to_wire(exc)
    code = exc.code if isinstance(exc, ProviderError) else wire.code
    error_type = code if code in _ERROR_TYPES else None
    if isinstance(exc, ProviderTimeout):
        error_type = "timeout_error"
    headers = dict(wire.headers)
    retry = exc.retry_after if isinstance(exc, ProviderError) else None
    if retry is not None and math.isfinite(retry) and retry >= 0:
        headers["retry-after"] = wire.headers.get("retry-after", str(retry))
    return MessagesWireError(
        wire.status, wire.message, type=error_type, headers=headers, timeout=wire.timeout
    )


def messages_headers(ids: IdSource) -> dict[str, str]:
    """Response headers the API sends on every answer."""
    return {"request-id": ids.next("req_"), "anthropic-organization-id": "harness-fake"}
