"""Bedrock Converse responses, both directions: the ``converse`` answer and the
ConverseStream events -> neutral (the adapter, recordings) and neutral -> answer JSON
and events (the fake), with the API's error answers and headers.

Events are read in any of their three forms: botocore's parsed events
(``{"contentBlockDelta": {...}}``, what ``converse_stream(...)["stream"]`` yields), the
fake's ``(event type, payload)`` pairs, and the raw ``application/vnd.amazon.eventstream``
bytes of a recording (``response_from_sse``, read by botocore's parser).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from harness._errors import MalformedResponse, ProviderError, ProviderTimeout, RateLimited
from harness.formats._json import SSEEvent
from harness.formats._read import optional_int
from harness.formats._server import (
    DEFAULT_CHUNK_CHARS,
    DEFAULT_MAX_CHUNKS,
    IdSource,
    WireError,
    WireRequest,
    fragments,
    provider_error_to_wire,
    words,
)
from harness.formats.bedrock_converse._eventstream import read_frames, stream_bytes
from harness.formats.bedrock_converse._request import tool_use_block
from harness.formats.bedrock_converse._validation import ERROR_TYPES, ConverseWireError
from harness.loop import FinishReason, ModelResponse, Usage
from harness.messages import AssistantMessage, ToolCall

__all__ = [
    "EVENT_TYPES",
    "STOP_REASONS",
    "accumulate",
    "error_details",
    "error_for",
    "reasoning_blocks",
    "response_body",
    "response_events",
    "response_from_body",
    "response_from_events",
    "response_from_sse",
    "response_headers",
]

STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "malformed_model_output": "stop",
    "malformed_tool_use": "tool_calls",
}
"""Converse ``stopReason`` -> the harness finish reason."""

EVENT_TYPES = (
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
)
"""The events of a ConverseStream answer, in the order the API sends them."""

_STOP_OUT: dict[str, str] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filtered",
}
_STREAM_ERRORS = {
    "internalServerException": (500, True),
    "modelStreamErrorException": (424, False),
    "validationException": (400, False),
    "throttlingException": (429, True),
    "serviceUnavailableException": (503, True),
}
_WHAT = "Bedrock Converse response"


# -- body -> neutral ---------------------------------------------------------------------


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, Mapping):
        return Usage()
    read = optional_int(raw, "cacheReadInputTokens", "usage", _WHAT)
    write = optional_int(raw, "cacheWriteInputTokens", "usage", _WHAT)
    inputs = optional_int(raw, "inputTokens", "usage", _WHAT) + read + write
    outputs = optional_int(raw, "outputTokens", "usage", _WHAT)
    return Usage(
        input_tokens=inputs,
        output_tokens=outputs,
        total_tokens=inputs + outputs,
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


def _call(block: Mapping[str, Any], index: int) -> ToolCall:
    use = block["toolUse"]
    where = f"output.message.content[{index}].toolUse"
    call_id, name = use.get("toolUseId"), use.get("name")
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise MalformedResponse(
            f"malformed {_WHAT}: {where} needs a toolUseId and a name (strings), got {use!r:.120}"
        )
    return ToolCall(id=call_id, name=name, arguments=json.dumps(use.get("input") or {}))


def _message(data: Any) -> Mapping[str, Any]:
    output = data.get("output") if isinstance(data, Mapping) else None
    message = output.get("message") if isinstance(output, Mapping) else None
    if not isinstance(message, Mapping) or not isinstance(message.get("content"), list):
        raise MalformedResponse(
            f"expected a Converse answer ({{output: {{message: {{content: [...]}}}}}}), "
            f"got {data!r:.200}",
            code="invalid_response",
        )
    return message


def response_from_body(data: Any) -> ModelResponse:
    """The harness response for a ``converse`` answer (boto3's dict or the JSON body).

    Text blocks are joined; ``toolUse`` blocks become tool calls with their ``input`` as a
    JSON string; ``reasoningContent`` is not part of the neutral message (read it with
    ``reasoning_blocks``). A guardrail or content-filter stop puts the text in
    ``message.refusal``.
    """
    message = _message(data)
    blocks = [b for b in message["content"] if isinstance(b, Mapping)]
    text = "".join(b["text"] for b in blocks if isinstance(b.get("text"), str))
    calls = tuple(
        _call(b, i) for i, b in enumerate(blocks) if isinstance(b.get("toolUse"), Mapping)
    )
    finish = STOP_REASONS.get(str(data.get("stopReason") or "end_turn"), "stop")
    if finish == "content_filter":
        assistant = AssistantMessage(content=None, tool_calls=calls, refusal=text or "filtered")
    else:
        assistant = AssistantMessage(content=text or None, tool_calls=calls)
    model = data.get("modelId")
    return ModelResponse(
        message=assistant,
        finish_reason=finish,
        usage=_usage(data.get("usage")),
        model_name=model if isinstance(model, str) else None,
    )


def reasoning_blocks(data: Any) -> list[dict[str, Any]]:
    """The ``reasoningContent`` blocks of an answer, to send back unchanged with its turn."""
    message = _message(data)
    return [
        dict(b) for b in message["content"] if isinstance(b, Mapping) and "reasoningContent" in b
    ]


def _event(raw: Any) -> tuple[str, Any]:
    """``(event type, payload)`` of one event in any of its forms."""
    if isinstance(raw, tuple) and len(raw) == 2:
        return str(raw[0]), raw[1]
    if isinstance(raw, Mapping) and len(raw) == 1:
        ((name, payload),) = raw.items()
        return str(name), payload
    raise MalformedResponse(f"malformed Bedrock stream event: {raw!r:.120}")


def _stream_error(name: str, payload: Any) -> ProviderError:
    status, retryable = _STREAM_ERRORS.get(name, (500, True))
    message = payload.get("message") if isinstance(payload, Mapping) else payload
    cls = RateLimited if status == 429 else ProviderError
    return cls(
        f"Bedrock stream error ({name}): {message}",
        status=status,
        code=name[0].upper() + name[1:],
        retryable=retryable,
    )


def accumulate(events: Iterable[Any]) -> dict[str, Any]:
    """The ``converse`` answer a stream of ConverseStream events adds up to (botocore's
    parsed events or ``(event type, payload)`` pairs). A stream error event raises its
    ``ProviderError``; a delta for no block or tool input that is not JSON is a
    ``MalformedResponse`` naming the event."""
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    answer: dict[str, Any] = {"stopReason": "end_turn"}
    started = False
    for number, raw in enumerate(events):
        name, payload = _event(raw)
        if name in _STREAM_ERRORS or name.endswith("Exception"):
            raise _stream_error(name, payload)
        try:
            started = _apply(name, payload, blocks, partial, answer) or started
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise MalformedResponse(
                f"malformed Bedrock stream: event {number} ({name}) could not be read "
                f"({type(exc).__name__}: {exc})"
            ) from None
    if not started:
        raise ProviderError("the stream ended before its messageStart event", code="empty_response")
    for index, text in partial.items():
        blocks[index]["toolUse"]["input"] = json.loads(text) if text.strip() else {}
    content = [blocks[i] for i in sorted(blocks)]
    answer["output"] = {"message": {"role": "assistant", "content": content}}
    return answer


def _apply(
    name: str,
    payload: Any,
    blocks: dict[int, dict[str, Any]],
    partial: dict[int, str],
    answer: dict[str, Any],
) -> bool:
    if name == "messageStart":
        return True
    if name == "contentBlockStart":
        start = payload["start"]
        index = int(payload["contentBlockIndex"])
        if "toolUse" in start:
            blocks[index] = {"toolUse": {**start["toolUse"], "input": {}}}
            partial[index] = ""
    elif name == "contentBlockDelta":
        index, delta = int(payload["contentBlockIndex"]), payload["delta"]
        if "text" in delta:
            block = blocks.setdefault(index, {"text": ""})
            block["text"] += delta["text"]
        elif "toolUse" in delta:
            partial[index] += delta["toolUse"].get("input", "")
        elif "reasoningContent" in delta:
            _reasoning(
                blocks.setdefault(index, {"reasoningContent": {}}), delta["reasoningContent"]
            )
    elif name == "messageStop":
        answer["stopReason"] = payload.get("stopReason") or "end_turn"
    elif name == "metadata":
        answer["usage"] = payload.get("usage") or {}
        if "metrics" in payload:
            answer["metrics"] = payload["metrics"]
    return False


def _reasoning(block: dict[str, Any], delta: Mapping[str, Any]) -> None:
    content = block["reasoningContent"]
    if "redactedContent" in delta:
        content["redactedContent"] = delta["redactedContent"]
        return
    text = content.setdefault("reasoningText", {"text": ""})
    if "text" in delta:
        text["text"] += delta["text"]
    if "signature" in delta:
        text["signature"] = delta["signature"]


def response_from_events(events: Iterable[Any]) -> ModelResponse:
    """Accumulate ConverseStream events (botocore's or ``(type, payload)`` pairs) into the
    harness response."""
    return response_from_body(accumulate(events))


def response_from_sse(text: str | bytes) -> ModelResponse:
    """The harness response for a whole streamed body as recorded. Bedrock streams in the
    binary ``application/vnd.amazon.eventstream`` framing, not server-sent events: the
    bytes (or their base64 text) are read with botocore's parser; exception frames raise."""
    frames = read_frames(stream_bytes(text))
    return response_from_events((name, payload) for _kind, name, payload in frames)


# -- neutral -> body (the fake) ----------------------------------------------------------


def _usage_out(usage: Usage) -> dict[str, Any]:
    fresh = max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
    out = {
        "inputTokens": fresh,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.input_tokens + usage.output_tokens,
    }
    if usage.cache_read_tokens or usage.cache_write_tokens:
        out["cacheReadInputTokens"] = usage.cache_read_tokens
        out["cacheWriteInputTokens"] = usage.cache_write_tokens
    return out


def _content_out(response: ModelResponse) -> list[dict[str, Any]]:
    message = response.message
    text = message.refusal if response.finish_reason == "content_filter" else message.content
    text = text or message.content or message.refusal
    blocks: list[dict[str, Any]] = [{"text": text}] if text else []
    blocks.extend(tool_use_block(call) for call in message.tool_calls)
    return blocks


def _stop_out(response: ModelResponse) -> str:
    if response.message.tool_calls:
        return "tool_use"
    return _STOP_OUT.get(response.finish_reason, "end_turn")


def response_body(wire: WireRequest, response: ModelResponse, ids: IdSource) -> dict[str, Any]:
    """The ``converse`` JSON answer for one model response."""
    return {
        "output": {"message": {"role": "assistant", "content": _content_out(response)}},
        "stopReason": _stop_out(response),
        "usage": _usage_out(response.usage),
        "metrics": {"latencyMs": 1},
    }


def response_events(
    wire: WireRequest,
    response: ModelResponse,
    ids: IdSource,
    *,
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    max_chunks: int = DEFAULT_MAX_CHUNKS,
) -> list[SSEEvent]:
    """The ``(event type, payload)`` pairs ConverseStream sends for ``response``, in its
    order: ``messageStart``, per block (``contentBlockStart`` for a tool use)
    ``contentBlockDelta``s and ``contentBlockStop``, ``messageStop``, ``metadata``
    (written as event-stream frames by ``stream_frames``)."""
    events: list[SSEEvent] = [("messageStart", {"role": "assistant"})]
    for index, block in enumerate(_content_out(response)):
        deltas: list[dict[str, Any]]
        if "text" in block:
            deltas = [{"text": piece} for piece in words(block["text"], max_chunks)]
        else:
            use = block["toolUse"]
            start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
            events.append(("contentBlockStart", {"contentBlockIndex": index, "start": start}))
            arguments = json.dumps(use["input"]) if use["input"] else ""
            deltas = [
                {"toolUse": {"input": piece}}
                for piece in fragments(arguments, max(1, chunk_chars), max_chunks)
                if piece
            ]
        events.extend(
            ("contentBlockDelta", {"contentBlockIndex": index, "delta": d}) for d in deltas
        )
        events.append(("contentBlockStop", {"contentBlockIndex": index}))
    events.append(("messageStop", {"stopReason": _stop_out(response)}))
    events.append(("metadata", {"usage": _usage_out(response.usage), "metrics": {"latencyMs": 1}}))
    return events


# -- errors and headers ------------------------------------------------------------------


def error_for(exc: ProviderError | WireError) -> ConverseWireError:
    """Bedrock's error answer for a served model's ``ProviderError`` (or an OpenAI-shaped
    wire error): the status's error type, ``{"message": ...}``."""
    if isinstance(exc, ConverseWireError):
        return exc
    wire = exc if isinstance(exc, WireError) else provider_error_to_wire(exc)
    status = 408 if isinstance(exc, ProviderTimeout) else wire.status
    code = exc.code if isinstance(exc, ProviderError) else None
    error_type = code if code in ERROR_TYPES.values() else None
    headers = dict(wire.headers)
    retry = exc.retry_after if isinstance(exc, ProviderError) else None
    if retry is not None and math.isfinite(retry) and retry >= 0:
        headers["retry-after"] = wire.headers.get("retry-after", str(retry))
    return ConverseWireError(
        status, wire.message, type=error_type, headers=headers, timeout=wire.timeout
    )


def response_headers(ids: IdSource) -> dict[str, str]:
    """Headers the fake sends with every Bedrock Runtime answer."""
    return {"x-amzn-RequestId": ids.next("req-")}


def error_details(body: Any) -> tuple[str | None, str | None]:
    """``(type, message)`` of a Bedrock error: botocore's ``ClientError.response`` (its
    ``Error`` code and message) or an error body (``{"message": ...}``, the type in
    ``__type`` when a proxy put it there)."""
    if not isinstance(body, Mapping):
        return None, None
    error = body.get("Error")
    if isinstance(error, Mapping):
        code, message = error.get("Code"), error.get("Message")
    else:
        code = body.get("__type") or body.get("code")
        message = body.get("message") or body.get("Message")
    if isinstance(code, str) and "#" in code:
        code = code.rsplit("#", 1)[1]
    return (str(code) if code else None, str(message) if message is not None else None)
