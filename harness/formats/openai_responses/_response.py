"""Responses API responses, both directions: ``Response`` / event stream -> neutral (the
adapter, cassettes) and neutral -> ``response`` JSON / events (the fake)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from harness._errors import ProviderError
from harness.formats._json import SSEEvent, sse_data
from harness.formats._read import checked_call, field, is_object, malformed, optional_int
from harness.formats._server import (
    DEFAULT_CHUNK_CHARS,
    DEFAULT_MAX_CHUNKS,
    IdSource,
    WireRequest,
    fragments,
    now,
    words,
)
from harness.formats.openai_responses._native import (
    DEFAULT_SEARCH_NAME,
    client_search_call_item,
    hosted_search_items,
    search_from_call,
    search_with_output,
)
from harness.formats.openai_responses._request import tool_params
from harness.loop import FinishReason, ModelResponse, Usage
from harness.messages import AssistantMessage, HostedSearch, ToolCall
from harness.tools._definitions import ToolDefinition

if TYPE_CHECKING:
    from openai.types.responses import Response, ResponseStreamEvent

__all__ = [
    "final_response",
    "reasoning_items",
    "response_body",
    "response_events",
    "response_from_body",
    "response_from_events",
    "response_from_sse",
]

_INCOMPLETE: dict[str, FinishReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}
_FINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})
_WHAT = "Responses API response"


# -- body -> neutral ---------------------------------------------------------------------


def response_from_body(
    data: Response | Mapping[str, Any], *, search_name: str = DEFAULT_SEARCH_NAME
) -> ModelResponse:
    """The harness response for a Responses API ``Response`` (an SDK object or its JSON).

    Every field used is checked: a wrongly shaped body is a ``MalformedResponse`` naming
    the field; a failed response (``error`` set) is a ``ProviderError``. Hosted tool
    searches (``tool_search_call`` / ``tool_search_output`` run by OpenAI) become the
    message's ``searches``; a client search call is a call of ``search_name``.
    """
    if not is_object(data):
        raise malformed(_WHAT, "the response body", "a JSON object", data)
    error = field(data, "error")
    if error is not None:
        message = field(error, "message") if is_object(error) else error
        code = field(error, "code") if is_object(error) else None
        raise ProviderError(f"the response failed: {message}", code=str(code))
    output = field(data, "output")
    if output is None:
        output = []
    if not isinstance(output, (list, tuple)):
        raise malformed(_WHAT, "output", "an array", output)
    texts: list[str] = []
    refusals: list[str] = []
    calls: list[ToolCall] = []
    searches: list[HostedSearch] = []
    for index, item in enumerate(output):
        path = f"output[{index}]"
        if not is_object(item):
            raise malformed(_WHAT, path, "an object", item)
        kind = field(item, "type")
        if kind == "message":
            _read_parts(item, path, texts, refusals)
        elif kind == "function_call":
            call = checked_call(
                _WHAT,
                (f"{path}.call_id", f"{path}.name", f"{path}.arguments"),
                field(item, "call_id"),
                field(item, "name"),
                field(item, "arguments"),
            )
            namespace = field(item, "namespace")
            if isinstance(namespace, str) and namespace:
                call = call.model_copy(update={"namespace": namespace})
            calls.append(call)
        elif kind in ("tool_search_call", "tool_search_output"):
            _read_search(_plain_item(item), path, calls, searches, search_name)
    finish: FinishReason = "tool_calls" if calls else "stop"
    if field(data, "status") == "incomplete":
        details = field(data, "incomplete_details")
        reason = field(details, "reason") if is_object(details) else None
        finish = _INCOMPLETE.get(reason if isinstance(reason, str) else "", "length")
    usage = Usage()
    raw_usage = field(data, "usage")
    if raw_usage is not None:
        if not is_object(raw_usage):
            raise malformed(_WHAT, "usage", "an object or null", raw_usage)
        details = field(raw_usage, "input_tokens_details")
        cached = written = 0
        if is_object(details):  # the prompt cache's share (automatic prefix caching)
            where = "usage.input_tokens_details"
            cached = optional_int(details, "cached_tokens", where, _WHAT)
            written = optional_int(details, "cache_write_tokens", where, _WHAT)
        usage = Usage(
            input_tokens=optional_int(raw_usage, "input_tokens", "usage", _WHAT),
            output_tokens=optional_int(raw_usage, "output_tokens", "usage", _WHAT),
            total_tokens=optional_int(raw_usage, "total_tokens", "usage", _WHAT),
            cache_read_tokens=cached,
            cache_write_tokens=written,
        )
    message = AssistantMessage(
        content="".join(texts) if texts else None,
        tool_calls=tuple(calls),
        refusal="".join(refusals) if refusals else None,
        searches=tuple(searches),
    )
    model = field(data, "model")
    return ModelResponse(
        message=message,
        finish_reason=finish,
        usage=usage,
        model_name=str(model) if model is not None else None,
    )


def _plain_item(item: Any) -> Mapping[str, Any]:
    """An output item as plain JSON data (the SDK's object dumped)."""
    dump = getattr(item, "model_dump", None)
    return dump(mode="json", exclude_unset=True) if callable(dump) else item  # type: ignore[no-any-return]


def _read_search(
    item: Mapping[str, Any],
    path: str,
    calls: list[ToolCall],
    searches: list[HostedSearch],
    search_name: str,
) -> None:
    """A ``tool_search_call`` or ``tool_search_output`` output item."""
    client = item.get("execution") == "client"
    if item.get("type") == "tool_search_call" and client:
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            raise malformed(_WHAT, f"{path}.call_id", "a string", call_id)
        arguments = item.get("arguments")
        calls.append(
            ToolCall(
                id=call_id,
                name=search_name,
                arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
            )
        )
    elif item.get("type") == "tool_search_call":
        searches.append(search_from_call(item))
    elif not client:
        last = searches[-1] if searches and not searches[-1].complete else None
        done = search_with_output(last, item)
        if last is not None:
            searches[-1] = done
        else:
            searches.append(done)


def _read_parts(item: Any, path: str, texts: list[str], refusals: list[str]) -> None:
    content = field(item, "content")
    if content is None:
        return
    if not isinstance(content, (list, tuple)):
        raise malformed(_WHAT, f"{path}.content", "an array", content)
    for index, part in enumerate(content):
        where = f"{path}.content[{index}]"
        if not is_object(part):
            raise malformed(_WHAT, where, "an object", part)
        kind = field(part, "type")
        if kind == "output_text":
            text = field(part, "text")
            if not isinstance(text, str):
                raise malformed(_WHAT, f"{where}.text", "a string", text)
            texts.append(text)
        elif kind == "refusal":
            refusal = field(part, "refusal")
            if not isinstance(refusal, str):
                raise malformed(_WHAT, f"{where}.refusal", "a string", refusal)
            refusals.append(refusal)


def _as_response(response: Response | Mapping[str, Any]) -> Response:
    from openai.types.responses import Response

    if isinstance(response, Mapping):  # leniently, like the SDK reads responses
        return Response.model_construct(**response)
    return response


def reasoning_items(response: Response | Mapping[str, Any]) -> list[dict[str, Any]]:
    """The reasoning items of a response, as input items to send back next turn."""
    response = _as_response(response)
    return [
        item.model_dump(mode="json", exclude_none=True)
        for item in response.output
        if item.type == "reasoning"
    ]


def final_response(events: Iterable[ResponseStreamEvent | Mapping[str, Any]]) -> Response:
    """The final ``Response`` of an event stream (``response.completed`` and kin)."""
    final: Any = None
    for event in events:
        data = event if isinstance(event, Mapping) else None
        kind = data.get("type") if data is not None else event.type  # type: ignore[union-attr]
        if kind == "error":
            message = data.get("message") if data is not None else getattr(event, "message", "")
            raise ProviderError(f"the response stream reported an error: {message}")
        if kind in _FINAL_EVENTS:
            final = data["response"] if data is not None else event.response  # type: ignore[union-attr]
    if final is None:
        raise ProviderError(
            "the response stream ended without response.completed", code="empty_response"
        )
    return _as_response(final)


def response_from_events(
    events: Iterable[ResponseStreamEvent | Mapping[str, Any]],
) -> ModelResponse:
    """The harness response for a Responses API event stream (SDK events or their JSON)."""
    return response_from_body(final_response(events))


def response_from_sse(text: str | bytes) -> ModelResponse:
    """The harness response for a whole SSE body, as recorded."""
    return response_from_events(sse_data(text))


# -- neutral -> body (the fake) ----------------------------------------------------------


def _usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {
            "cached_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
        },
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.total_tokens or usage.input_tokens + usage.output_tokens,
    }


def _items(wire: WireRequest, response: ModelResponse, ids: IdSource) -> list[dict[str, Any]]:
    message = response.message
    items: list[dict[str, Any]] = []
    if message.searches:
        definitions = {t.name: t for t in wire.request.tools}
        for search in message.searches:
            items.extend(
                hosted_search_items(search, lambda n: definitions.get(n) or ToolDefinition(name=n))
            )
    parts: list[dict[str, Any]] = []
    if message.content or (not message.tool_calls and message.refusal is None):
        text = message.content or ""
        parts.append({"type": "output_text", "text": text, "annotations": [], "logprobs": []})
    if message.refusal is not None:
        parts.append({"type": "refusal", "refusal": message.refusal})
    if parts:
        items.append(
            {
                "id": ids.next("msg_"),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": parts,
            }
        )
    client = frozenset(t.name for t in wire.request.tools if t.search == "client")
    for call in message.tool_calls:
        if call.name in client:
            items.append({"id": ids.next("tsc_"), **client_search_call_item(call)})
            continue
        item = {
            "id": ids.next("fc_"),
            "type": "function_call",
            "status": "completed",
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments,
        }
        if call.namespace is not None:
            item["namespace"] = call.namespace
        items.append(item)
    return items


def _envelope(wire: WireRequest, response_id: str, created: int) -> dict[str, Any]:
    body = wire.body
    return {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "status": "in_progress",
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": wire.model,
        "output": [],
        "parallel_tool_calls": body.get("parallel_tool_calls", True) is not False,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": bool(body.get("store", False)),
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": tool_params(wire.request.tools),
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": None,
        "user": None,
        "metadata": {},
    }


def _finish(envelope: dict[str, Any], response: ModelResponse, items: list[dict[str, Any]]) -> None:
    reason = {"length": "max_output_tokens", "content_filter": "content_filter"}.get(
        response.finish_reason
    )
    envelope.update(
        status="incomplete" if reason else "completed",
        incomplete_details={"reason": reason} if reason else None,
        output=items,
        usage=_usage(response.usage),
        completed_at=None if reason else envelope["created_at"],
    )


def response_body(wire: WireRequest, response: ModelResponse, ids: IdSource) -> dict[str, Any]:
    """The ``response`` JSON for one model response."""
    envelope = _envelope(wire, ids.next("resp_"), now())
    _finish(envelope, response, _items(wire, response, ids))
    return envelope


def response_events(
    wire: WireRequest,
    response: ModelResponse,
    ids: IdSource,
    *,
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    max_chunks: int = DEFAULT_MAX_CHUNKS,
) -> list[SSEEvent]:
    """The Responses API event stream (each event named by its ``type``) for one response."""
    counter = itertools.count()
    events: list[SSEEvent] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append((kind, {"type": kind, **fields, "sequence_number": next(counter)}))

    envelope = _envelope(wire, ids.next("resp_"), now())
    emit("response.created", response=dict(envelope))
    emit("response.in_progress", response=dict(envelope))
    items = _items(wire, response, ids)
    for index, item in enumerate(items):
        if item["type"] == "message":
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            for part_index, part in enumerate(item["content"]):
                _stream_part(emit, item["id"], index, part_index, part, max_chunks)
        elif item["type"] != "function_call":  # tool searches: added, then done
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress"},
            )
        else:
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            for piece in fragments(item["arguments"], chunk_chars, max_chunks):
                if piece:
                    emit(
                        "response.function_call_arguments.delta",
                        item_id=item["id"],
                        output_index=index,
                        delta=piece,
                    )
            emit(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=index,
                arguments=item["arguments"],
            )
        emit("response.output_item.done", output_index=index, item=item)
    _finish(envelope, response, items)
    done = "response.incomplete" if envelope["status"] == "incomplete" else "response.completed"
    emit(done, response=envelope)
    return events


def _stream_part(
    emit: Callable[..., None],
    item_id: str,
    index: int,
    part_index: int,
    part: dict[str, Any],
    max_chunks: int = DEFAULT_MAX_CHUNKS,
) -> None:
    where = {"item_id": item_id, "output_index": index, "content_index": part_index}
    if part["type"] == "output_text":
        emit(
            "response.content_part.added",
            **where,
            part={"type": "output_text", "text": "", "annotations": [], "logprobs": []},
        )
        for piece in words(part["text"], max_chunks):
            emit("response.output_text.delta", **where, delta=piece, logprobs=[])
        emit("response.output_text.done", **where, text=part["text"], logprobs=[])
    else:
        emit("response.content_part.added", **where, part={"type": "refusal", "refusal": ""})
        for piece in words(part["refusal"], max_chunks):
            emit("response.refusal.delta", **where, delta=piece)
        emit("response.refusal.done", **where, refusal=part["refusal"])
    emit("response.content_part.done", **where, part=part)
