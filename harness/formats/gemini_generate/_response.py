"""Gemini ``generateContent`` responses, both directions: response JSON / streamed chunks
-> neutral (the adapter, recordings) and neutral -> JSON / chunks (the fake), with the
API's error answers and headers.

A streamed answer is a sequence of partial responses (server-sent events with
``alt=sse``, else one JSON array): their parts are concatenated, the last
``finishReason`` and ``usageMetadata`` count. ``usageMetadata.promptTokenCount`` includes
the cached tokens (``cachedContentTokenCount``: implicit caching or a ``cachedContent``);
thinking tokens (``thoughtsTokenCount``) are output tokens.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from harness._errors import MalformedResponse, ProviderError, ProviderTimeout, RateLimited
from harness.formats._json import SSEEvent, arguments_object, sse_data
from harness.formats._read import is_object, malformed, optional_int
from harness.formats._server import (
    DEFAULT_CHUNK_CHARS,
    DEFAULT_MAX_CHUNKS,
    IdSource,
    WireError,
    WireRequest,
    provider_error_to_wire,
    words,
)
from harness.formats.gemini_generate._contents import model_message
from harness.formats.gemini_generate._validation import STATUS_NAMES, GeminiWireError, signature_for
from harness.formats.gemini_generate._wire import FINISH_REASONS, GeminiRoute, enum_name, get
from harness.loop import FinishReason, ModelResponse, Usage
from harness.messages import AssistantMessage

__all__ = [
    "FINISH_REASONS_MAP",
    "accumulate",
    "error_details",
    "error_for",
    "model_parts",
    "response_body",
    "response_events",
    "response_from_body",
    "response_from_events",
    "response_from_sse",
    "response_headers",
    "stream_frames",
]

FINISH_REASONS_MAP: dict[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "LANGUAGE": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
}
"""Gemini ``finishReason`` -> the harness finish reason (others are ``stop``; a turn with
function calls is ``tool_calls``)."""

_FINISH_OUT = {
    "stop": "STOP",
    "tool_calls": "STOP",
    "length": "MAX_TOKENS",
    "content_filter": "SAFETY",
}
_WHAT = "Gemini response"
_BLOCKED = "The model declined to answer (finishReason={reason})."


def _plain(data: Any) -> Any:
    """SDK objects (pydantic) as the API's JSON (camelCase, bytes as base64)."""
    dump = getattr(data, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_none=True)
    return data


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    if not is_object(raw):
        raise malformed(_WHAT, "usageMetadata", "an object or null", raw)
    where = "usageMetadata"
    cached = optional_int(raw, "cachedContentTokenCount", where, _WHAT)
    inputs = optional_int(raw, "promptTokenCount", where, _WHAT) + optional_int(
        raw, "toolUsePromptTokenCount", where, _WHAT
    )
    outputs = optional_int(raw, "candidatesTokenCount", where, _WHAT) + optional_int(
        raw, "thoughtsTokenCount", where, _WHAT
    )
    return Usage(
        input_tokens=inputs,
        output_tokens=outputs,
        total_tokens=inputs + outputs,
        cache_read_tokens=min(cached, inputs) if inputs else cached,
    )


def _candidate(data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    candidates = data.get("candidates")
    if candidates is None:
        return None
    if not isinstance(candidates, list):
        raise malformed(_WHAT, "candidates", "an array", candidates)
    if not candidates:
        return None
    first = candidates[0]
    if not isinstance(first, Mapping):
        raise malformed(_WHAT, "candidates[0]", "an object", first)
    return first


def model_parts(data: Any) -> list[dict[str, Any]]:
    """The parts of a response's first candidate as sent (thought signatures included),
    to send back with the turn; a streamed response's chunks are accumulated first."""
    data = _plain(data)
    if isinstance(data, list):
        data = accumulate(data)
    candidate = _candidate(data) if isinstance(data, Mapping) else None
    parts = get(get(candidate, "content"), "parts") if candidate else None
    return [dict(p) for p in parts or () if isinstance(p, Mapping)]


def _raise_error(data: Mapping[str, Any]) -> None:
    error = data.get("error")
    if error is None:
        return
    status, message = error_details(data)
    raise ProviderError(f"Gemini API error ({status}): {message}", code=status)


def response_from_body(data: Any) -> ModelResponse:
    """The harness response for a ``generateContent`` answer (its JSON, the SDK's
    ``GenerateContentResponse``, or a streamed JSON array of partial answers).

    Text parts are joined (thoughts left out: ``model_parts`` keeps them), function calls
    become tool calls (an id derived from the call when the API sent none); a blocked
    prompt or a safety stop puts the text in ``message.refusal``.
    """
    data = _plain(data)
    if isinstance(data, list):
        return response_from_events(data)
    if not isinstance(data, Mapping):
        raise MalformedResponse(
            f"expected a Gemini GenerateContentResponse object, got {data!r:.200}",
            code="invalid_response",
        )
    _raise_error(data)
    candidate = _candidate(data)
    parts = get(get(candidate, "content"), "parts") if candidate else None
    if parts is not None and not isinstance(parts, list):
        raise malformed(_WHAT, "candidates[0].content.parts", "an array", parts)
    message = model_message(parts or [])
    reason = enum_name(get(candidate, "finishReason"), FINISH_REASONS) if candidate else None
    blocked = enum_name(get(get(data, "promptFeedback"), "blockReason"), ())
    finish: FinishReason = FINISH_REASONS_MAP.get(reason or "STOP", "stop")
    if candidate is None and blocked:
        finish, reason = "content_filter", blocked
    if message.tool_calls and finish == "stop":
        finish = "tool_calls"
    if finish == "content_filter":
        message = AssistantMessage(
            content=None,
            tool_calls=message.tool_calls,
            refusal=message.content or _BLOCKED.format(reason=reason),
        )
    version = get(data, "modelVersion")
    return ModelResponse(
        message=message,
        finish_reason=finish,
        usage=_usage(get(data, "usageMetadata")),
        model_name=version if isinstance(version, str) else None,
    )


def accumulate(events: Iterable[Any]) -> dict[str, Any]:
    """One response of a stream of partial responses (dicts or SDK objects): the parts
    concatenated, the last ``finishReason``, ``usageMetadata`` and ``modelVersion``."""
    parts: list[Any] = []
    out: dict[str, Any] = {}
    reason: Any = None
    seen = False
    for number, raw in enumerate(events):
        event = _plain(raw)
        if not isinstance(event, Mapping):
            raise MalformedResponse(
                f"malformed Gemini stream: chunk {number} is {type(event).__name__}, expected "
                "a GenerateContentResponse object"
            )
        seen = True
        _raise_error(event)
        candidate = _candidate(event)
        if candidate is not None:
            more = get(get(candidate, "content"), "parts") or []
            if not isinstance(more, list):
                raise malformed(
                    _WHAT, f"chunk {number}: candidates[0].content.parts", "an array", more
                )
            parts.extend(more)
            reason = get(candidate, "finishReason") or reason
        for key in ("usageMetadata", "modelVersion", "responseId", "promptFeedback"):
            if get(event, key) is not None:
                out[key] = get(event, key)
    if not seen:
        raise ProviderError("the Gemini stream ended before its first chunk", code="empty_response")
    candidate_out: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if reason is not None:
        candidate_out["finishReason"] = reason
    if parts or reason is not None or "promptFeedback" not in out:
        out["candidates"] = [candidate_out]
    return out


def response_from_events(events: Iterable[Any]) -> ModelResponse:
    """Accumulate streamed chunks (dicts or SDK objects) into the harness response."""
    return response_from_body(accumulate(events))


def response_from_sse(text: str | bytes) -> ModelResponse:
    """The harness response for a whole SSE body, as recorded."""
    return response_from_events(sse_data(text))


# -- neutral -> body (the fake) ----------------------------------------------------------


def _usage_out(usage: Usage) -> dict[str, Any]:
    out: dict[str, Any] = {
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens,
        "totalTokenCount": usage.input_tokens + usage.output_tokens,
    }
    if usage.cache_read_tokens:
        out["cachedContentTokenCount"] = usage.cache_read_tokens
    return out


def _parts_out(response: Any) -> list[dict[str, Any]]:
    message = response.message
    text = message.refusal if response.finish_reason == "content_filter" else message.content
    text = text or message.content or message.refusal
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    for index, call in enumerate(message.tool_calls):
        args = arguments_object(call.arguments)
        part: dict[str, Any] = {"functionCall": {"name": call.name, "args": args, "id": call.id}}
        if index == 0:  # as Gemini does: the first call of a turn carries the signature
            part["thoughtSignature"] = signature_for(call.name, args)
        parts.append(part)
    return parts


def _finish_out(response: ModelResponse) -> str:
    return _FINISH_OUT.get(response.finish_reason, "STOP")


def response_body(wire: WireRequest, response: ModelResponse, ids: IdSource) -> dict[str, Any]:
    """The ``GenerateContentResponse`` JSON for one model response."""
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": _parts_out(response) or [{"text": ""}]},
                "finishReason": _finish_out(response),
                "index": 0,
            }
        ],
        "usageMetadata": _usage_out(response.usage),
        "modelVersion": wire.model,
        "responseId": ids.next("resp_"),
    }


def response_events(
    wire: WireRequest,
    response: ModelResponse,
    ids: IdSource,
    *,
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    max_chunks: int = DEFAULT_MAX_CHUNKS,
) -> list[SSEEvent]:
    """The partial responses the API streams for ``response``: the text a few words at a
    time, the function calls whole in one chunk, the last chunk with ``finishReason`` and
    the usage (a function call's arguments are never split, so ``chunk_chars`` is
    unused)."""
    del chunk_chars
    response_id = ids.next("resp_")
    usage = _usage_out(response.usage)
    prompt_only = {
        "promptTokenCount": usage["promptTokenCount"],
        "totalTokenCount": usage["promptTokenCount"],
    }
    parts = _parts_out(response)

    def chunk(chunk_parts: list[dict[str, Any]], last: bool) -> SSEEvent:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": chunk_parts}, "index": 0}
        if last:
            candidate["finishReason"] = _finish_out(response)
        data = {
            "candidates": [candidate],
            "usageMetadata": usage if last else prompt_only,
            "modelVersion": wire.model,
            "responseId": response_id,
        }
        return (None, data)

    events: list[SSEEvent] = []
    text = parts[0]["text"] if parts and "text" in parts[0] else None
    calls = [p for p in parts if "functionCall" in p]
    if text:
        events.extend(chunk([{"text": piece}], False) for piece in words(text, max_chunks))
    events.append(chunk(calls or [{"text": ""}], True))
    return events


def stream_frames(
    events: Iterable[SSEEvent], route: GeminiRoute | None = None
) -> tuple[str, list[bytes]]:
    """The ``content-type`` and the chunks of a streamed answer: server-sent events
    (``alt=sse``, or no ``route``), else one JSON array written chunk by chunk."""
    datas = [data for _event, data in events]
    if route is None or route.sse:
        frames = [f"data: {json.dumps(d, separators=(',', ':'))}\r\n\r\n".encode() for d in datas]
        return "text/event-stream", frames
    pieces = [json.dumps(d, separators=(",", ":")) for d in datas]
    frames = [("[" if i == 0 else ",\r\n").encode() + p.encode() for i, p in enumerate(pieces)]
    return "application/json; charset=UTF-8", [*frames, b"]"]


# -- errors and headers ------------------------------------------------------------------


def error_for(exc: ProviderError | WireError) -> GeminiWireError:
    """The API's error answer for a served model's ``ProviderError`` (or another format's
    wire error), in Google's shape."""
    if isinstance(exc, GeminiWireError):
        return exc
    wire = exc if isinstance(exc, WireError) else provider_error_to_wire(exc)
    status = STATUS_NAMES.get(wire.status)
    if isinstance(exc, ProviderTimeout):
        status = "DEADLINE_EXCEEDED"
    headers = dict(wire.headers)
    retry = exc.retry_after if isinstance(exc, ProviderError) else None
    if retry is not None and math.isfinite(retry) and retry >= 0:
        headers["retry-after"] = wire.headers.get("retry-after", str(retry))
    return GeminiWireError(
        wire.status, wire.message, code=status, headers=headers, timeout=wire.timeout
    )


def response_headers(ids: IdSource) -> dict[str, str]:
    """Headers the fake sends with every Gemini answer."""
    return {
        "server": "scaffolding on HTTPServer2",
        "vary": "Origin, X-Origin, Referer",
        "x-harness-request-id": ids.next("req_"),
    }


def error_details(body: Any) -> tuple[str | None, str | None]:
    """``(status, message)`` of a Google error body (``{"error": {"code", "message",
    "status"}}``; a list of them, as a streamed JSON array sends one, too)."""
    if isinstance(body, list) and body:
        body = body[0]
    inner = body.get("error") if isinstance(body, Mapping) else None
    error: Mapping[str, Any] = inner if isinstance(inner, Mapping) else {}
    status = error.get("status") or error.get("code")
    message = error.get("message")
    return (
        str(status) if status is not None else None,
        str(message) if message is not None else None,
    )


def provider_error(status: int, body: Any) -> ProviderError:
    """The ``ProviderError`` of a Gemini error answer (``RateLimited`` for 429)."""
    code, message = error_details(body)
    cls = RateLimited if status == 429 else ProviderError
    return cls(f"Gemini API error (status={status}, {code}): {message}", status=status, code=code)
