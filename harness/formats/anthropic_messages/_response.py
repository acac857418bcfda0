"""Anthropic Messages responses, both directions: message JSON / events -> neutral (the
adapter, recordings) and neutral -> message JSON / SSE events (the fake), with the API's
error answers and headers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from harness._errors import MalformedResponse, ProviderError, ProviderTimeout
from harness.formats._json import SSEEvent, sse_data
from harness.formats._openai import response_headers as openai_headers
from harness.formats._read import is_object, malformed, optional_int
from harness.formats._server import (
    DEFAULT_CHUNK_CHARS,
    DEFAULT_MAX_CHUNKS,
    IdSource,
    WireError,
    WireRequest,
    fragments,
    provider_error_to_wire,
)
from harness.formats.anthropic_messages._native import hosted_search_blocks, searches_of
from harness.formats.anthropic_messages._request import blocks_of, tool_use_block
from harness.formats.anthropic_messages._validation import MessagesWireError
from harness.loop import FinishReason, ModelResponse, Usage
from harness.messages import AssistantMessage, ToolCall

__all__ = [
    "STOP_REASONS",
    "accumulate",
    "error_details",
    "error_for",
    "response_body",
    "response_events",
    "response_from_body",
    "response_from_events",
    "response_from_sse",
    "response_headers",
    "thinking_blocks",
]

STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
"""Anthropic ``stop_reason`` -> the harness finish reason."""

_STOP_OUT: dict[str, str] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_THINKING = frozenset({"thinking", "redacted_thinking"})
_REFUSED = "The model declined to answer (stop_reason='refusal')."
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


# -- body -> neutral ---------------------------------------------------------------------


def _plain(data: Any) -> Any:
    """SDK objects (pydantic) as plain JSON data."""
    dump = getattr(data, "model_dump", None)
    return dump(mode="json", exclude_none=False) if callable(dump) else data


_WHAT = "Anthropic message"


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    if not is_object(raw):
        raise malformed(_WHAT, "usage", "an object or null", raw)
    read = optional_int(raw, "cache_read_input_tokens", "usage", _WHAT)
    write = optional_int(raw, "cache_creation_input_tokens", "usage", _WHAT)
    inputs = optional_int(raw, "input_tokens", "usage", _WHAT) + read + write
    outputs = optional_int(raw, "output_tokens", "usage", _WHAT)
    return Usage(
        input_tokens=inputs,
        output_tokens=outputs,
        total_tokens=inputs + outputs,
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


def response_from_body(data: Any) -> ModelResponse:
    """The harness response for a Messages response (``anthropic.types.Message`` or its JSON).

    Text blocks are joined; ``tool_use`` blocks become tool calls with their ``input`` as a
    JSON string; a ``refusal`` stop puts the text in ``message.refusal``. Thinking blocks
    are not part of the neutral message: read them with ``thinking_blocks``. A body that
    is not a message is a ``MalformedResponse`` (``code="invalid_response"``).
    """
    data = _plain(data)
    if not isinstance(data, Mapping) or data.get("type", "message") != "message":
        raise MalformedResponse(
            f"expected an Anthropic message object, got {data!r:.200}", code="invalid_response"
        )
    blocks = blocks_of(data.get("content"))
    text = "".join(
        b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    )
    try:
        calls = tuple(
            ToolCall(
                id=str(b["id"]), name=str(b["name"]), arguments=json.dumps(b.get("input") or {})
            )
            for b in blocks
            if b.get("type") == "tool_use"
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedResponse(
            f"malformed Anthropic message: a tool_use block has no {exc} (or an input that is "
            "not JSON)"
        ) from None
    stop = data.get("stop_reason") or "end_turn"
    finish = STOP_REASONS.get(str(stop), "stop")
    searches = searches_of(blocks)
    if finish == "content_filter":
        assistant = AssistantMessage(
            content=None, tool_calls=calls, refusal=text or _REFUSED, searches=searches
        )
    else:
        assistant = AssistantMessage(content=text or None, tool_calls=calls, searches=searches)
    return ModelResponse(
        message=assistant,
        finish_reason=finish,
        usage=_usage(data.get("usage")),
        model_name=data.get("model"),
    )


def thinking_blocks(message: Any) -> list[dict[str, Any]]:
    """The ``thinking`` / ``redacted_thinking`` blocks of a response, to send back unchanged."""
    data = _plain(message)
    return [dict(b) for b in blocks_of(data.get("content")) if b.get("type") in _THINKING]


def accumulate(events: Iterable[Any]) -> dict[str, Any]:
    """The final message JSON of a stream of Messages events (dicts or SDK event objects).

    An event stream that is not the API's (a missing field, a delta for no block, partial
    tool input that is not JSON) is a ``MalformedResponse`` naming the event.
    """
    message: dict[str, Any] | None = None
    partial: dict[int, str] = {}
    for number, raw in enumerate(events):
        event = _plain(raw)
        try:
            message = _apply(event, message, partial)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise MalformedResponse(
                f"malformed Anthropic stream: event {number} "
                f"({event.get('type') if isinstance(event, Mapping) else event!r:.40}) could not "
                f"be read ({type(exc).__name__}: {exc})"
            ) from None
    if message is None:
        raise ProviderError(
            "the stream ended before its message_start event", code="empty_response"
        )
    return message


def _apply(
    event: Mapping[str, Any], message: dict[str, Any] | None, partial: dict[int, str]
) -> dict[str, Any] | None:
    """``message`` after one stream event (a new message at ``message_start``)."""
    kind = event.get("type")
    if kind == "error":
        error = event.get("error") or {}
        raise ProviderError(
            f"Anthropic stream error ({error.get('type')}): {error.get('message')}",
            code=error.get("type"),
            retryable=error.get("type") in ("overloaded_error", "api_error"),
        )
    if kind == "message_start":
        message = dict(event["message"])
        message["content"] = list(message.get("content") or [])
        return message
    if message is None:
        return None
    content = message["content"]
    if kind == "content_block_start":
        content.append(dict(event["content_block"]))
    elif kind == "content_block_delta":
        block, delta = content[event["index"]], event["delta"]
        dtype = delta.get("type")
        if dtype == "text_delta":
            block["text"] = block.get("text", "") + delta["text"]
        elif dtype == "input_json_delta":
            partial[event["index"]] = partial.get(event["index"], "") + delta["partial_json"]
        elif dtype == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
        elif dtype == "signature_delta":
            block["signature"] = delta["signature"]
        elif dtype == "citations_delta":
            block.setdefault("citations", []).append(delta["citation"])
    elif kind == "content_block_stop":
        index = event["index"]
        if index in partial:
            text = partial.pop(index)
            content[index]["input"] = json.loads(text) if text.strip() else {}
    elif kind == "message_delta":
        message.update({k: v for k, v in (event.get("delta") or {}).items()})
        usage = dict(message.get("usage") or {})
        usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
        message["usage"] = usage
    return message


def response_from_events(events: Iterable[Any]) -> ModelResponse:
    """Accumulate streamed events (dicts or SDK objects) into the harness response."""
    return response_from_body(accumulate(events))


def response_from_sse(text: str | bytes) -> ModelResponse:
    """The harness response for a whole SSE body, as recorded (padded JSON and pings fine)."""
    return response_from_events(sse_data(text))


# -- neutral -> body (the fake) ----------------------------------------------------------


def _usage_out(usage: Usage) -> dict[str, Any]:
    fresh = max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
    return {
        "input_tokens": fresh,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "output_tokens": usage.output_tokens,
        "service_tier": "standard",
    }


def _content_out(response: ModelResponse) -> list[dict[str, Any]]:
    message = response.message
    blocks: list[dict[str, Any]] = []
    for search in message.searches:
        blocks.extend(hosted_search_blocks(search))
    text = message.refusal if response.finish_reason == "content_filter" else message.content
    text = text or message.content or message.refusal
    if text:
        blocks.append({"type": "text", "text": text})
    blocks.extend(tool_use_block(call) for call in message.tool_calls)
    return blocks


def _stop_out(response: ModelResponse) -> str:
    if response.message.tool_calls:
        return "tool_use"
    return _STOP_OUT.get(response.finish_reason, "end_turn")


def _message(response: ModelResponse, *, model: str, message_id: str) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _content_out(response),
        "stop_reason": _stop_out(response),
        "stop_sequence": None,
        "usage": _usage_out(response.usage),
    }


def response_body(wire: WireRequest, response: ModelResponse, ids: IdSource) -> dict[str, Any]:
    """The ``message`` JSON for one model response."""
    return _message(response, model=wire.model, message_id=ids.next("msg_"))


def response_events(
    wire: WireRequest,
    response: ModelResponse,
    ids: IdSource,
    *,
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    max_chunks: int = DEFAULT_MAX_CHUNKS,
) -> list[SSEEvent]:
    """The ``(event, data)`` pairs the API streams for ``response``, in its order:
    ``message_start``, per block ``content_block_start`` / ``..._delta`` / ``..._stop``
    (a ``ping`` after the first start), ``message_delta``, ``message_stop``."""
    start = _message(response, model=wire.model, message_id=ids.next("msg_"))
    usage = dict(start["usage"])
    start.update(content=[], stop_reason=None)
    start["usage"] = {**usage, "output_tokens": min(1, usage["output_tokens"])}
    events: list[SSEEvent] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(_content_out(response)):
        if block["type"] == "text":
            opened: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _words(block["text"])]
        elif "input" not in block:  # a search result: sent whole at its start
            opened, deltas = block, []
        else:
            opened = {**block, "input": {}}
            arguments = json.dumps(block["input"]) if block["input"] else ""
            deltas = [{"type": "input_json_delta", "partial_json": ""}] + [
                {"type": "input_json_delta", "partial_json": p}
                for p in fragments(arguments, max(1, chunk_chars), max_chunks)
                if p
            ]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opened},
            )
        )
        if index == 0:
            events.append(("ping", {"type": "ping"}))
        events.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": _stop_out(response), "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _words(text: str) -> list[str]:
    out: list[str] = []
    for word in text.split(" "):
        out.append(word if not out else " " + word)
    return [w for w in out if w] or [text]


# -- errors and headers ------------------------------------------------------------------


def error_for(exc: ProviderError | WireError) -> MessagesWireError:
    """The API's error answer for a served model's ``ProviderError`` (or an OpenAI-shaped
    wire error), in Anthropic's shape."""
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


def response_headers(ids: IdSource) -> dict[str, str]:
    """Headers the fake sends with every Messages answer."""
    return {
        **openai_headers(ids),
        "request-id": ids.next("req_"),
        "anthropic-organization-id": "harness-fake",
    }


def error_details(body: Any) -> tuple[str | None, str | None]:
    """``(type, message)`` of an Anthropic error body (``{"type": "error", "error": {...}}``)."""
    inner = body.get("error") if isinstance(body, Mapping) else None
    error: Mapping[str, Any] = inner if isinstance(inner, Mapping) else {}
    code = error.get("type") or (body.get("type") if isinstance(body, Mapping) else None)
    message = error.get("message")
    return (
        str(code) if code is not None else None,
        str(message) if message is not None else None,
    )
