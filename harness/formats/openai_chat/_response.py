"""Chat Completions responses, both directions: body/chunks -> neutral (the adapter,
cassettes) and neutral -> ``chat.completion`` JSON / chunk events (the fake)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from harness._errors import ProviderError
from harness.formats._json import SSEEvent, sse_data
from harness.formats._read import (
    checked_call,
    error_body_message,
    field,
    is_object,
    malformed,
    optional_int,
    optional_str,
)
from harness.formats._server import (
    DEFAULT_CHUNK_CHARS,
    DEFAULT_MAX_CHUNKS,
    IdSource,
    WireRequest,
    fragments,
    now,
    words,
)
from harness.formats.openai_chat._stream import ChatStream
from harness.loop import FinishReason, ModelResponse, Usage
from harness.messages import AssistantMessage, ToolCall

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

__all__ = [
    "response_body",
    "response_events",
    "response_from_body",
    "response_from_events",
    "response_from_sse",
]

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}

# -- body -> neutral ---------------------------------------------------------------------


def response_from_body(data: ChatCompletion | Mapping[str, Any]) -> ModelResponse:
    """The harness response for a ``ChatCompletion`` (an SDK object or its JSON).

    Every field used is checked: a body that is not a completion (a list, a tool call
    whose ``arguments`` is not a string) is a ``MalformedResponse`` naming the field; an
    error body is a ``ProviderError`` (``code="error_body"``).
    """
    what = "chat completion"
    if not is_object(data):
        raise malformed(what, "the response body", "a JSON object", data)
    choices = field(data, "choices")
    error = error_body_message(data)
    if error is not None and not choices:
        raise ProviderError(
            f"the response is an error body, not a chat completion: {error}", code="error_body"
        )
    if choices is None:
        choices = []
    if not isinstance(choices, (list, tuple)):
        raise malformed(what, "choices", "an array", choices)
    if not choices:
        raise ProviderError(
            f"the completion {field(data, 'id')!r} has no choices; expected one choice",
            code="empty_response",
        )
    choice = choices[0]
    if not is_object(choice):
        raise malformed(what, "choices[0]", "an object", choice)
    message = field(choice, "message")
    if not is_object(message):
        raise malformed(what, "choices[0].message", "an object", message)
    where = "choices[0].message"
    content = optional_str(message, "content", where, what)
    refusal = optional_str(message, "refusal", where, what)
    finish = optional_str(choice, "finish_reason", "choices[0]", what)
    return ModelResponse(
        message=AssistantMessage(
            content=content, tool_calls=_read_calls(message, where, what), refusal=refusal
        ),
        finish_reason=_FINISH.get(finish or "stop", "stop"),
        usage=_read_usage(field(data, "usage"), what),
        model_name=optional_str(data, "model", "completion", what),
    )


def _read_calls(message: Any, where: str, what: str) -> tuple[ToolCall, ...]:
    raw = field(message, "tool_calls")
    if raw is None:
        return ()
    if not isinstance(raw, (list, tuple)):
        raise malformed(what, f"{where}.tool_calls", "an array or null", raw)
    calls = []
    for index, call in enumerate(raw):
        path = f"{where}.tool_calls[{index}]"
        if not is_object(call):
            raise malformed(what, path, "an object", call)
        if field(call, "type") not in (None, "function"):
            continue  # custom tools: not harness tools
        function = field(call, "function")
        if not is_object(function):
            raise malformed(what, f"{path}.function", "an object", function)
        calls.append(
            checked_call(
                what,
                (f"{path}.id", f"{path}.function.name", f"{path}.function.arguments"),
                field(call, "id"),
                field(function, "name"),
                field(function, "arguments"),
            )
        )
    return tuple(calls)


def _read_usage(usage: Any, what: str) -> Usage:
    if usage is None:
        return Usage()
    if not is_object(usage):
        raise malformed(what, "usage", "an object or null", usage)
    details = field(usage, "prompt_tokens_details")
    cached = written = 0
    if is_object(details):  # the prompt cache's share (OpenAI's automatic prefix caching)
        cached = optional_int(details, "cached_tokens", "usage.prompt_tokens_details", what)
        written = optional_int(details, "cache_write_tokens", "usage.prompt_tokens_details", what)
    return Usage(
        input_tokens=optional_int(usage, "prompt_tokens", "usage", what),
        output_tokens=optional_int(usage, "completion_tokens", "usage", what),
        total_tokens=optional_int(usage, "total_tokens", "usage", what),
        cache_read_tokens=cached,
        cache_write_tokens=written,
    )


def response_from_events(
    events: Iterable[ChatCompletionChunk | Mapping[str, Any]],
) -> ModelResponse:
    """Accumulate streamed chunks (SDK objects or their JSON) in linear time
    (:class:`~harness.formats.openai_chat._stream.ChatStream`; the SDK's own stream state
    is quadratic in the number of parallel tool calls)."""
    stream = ChatStream()
    seen = False
    for index, chunk in enumerate(events):
        _check_chunk(chunk, index)
        stream.add(chunk, index)
        seen = True
    if not seen:
        raise ProviderError("the stream ended before its first chunk", code="empty_response")
    return response_from_body(stream.completion())


def response_from_sse(text: str | bytes) -> ModelResponse:
    """The harness response for a whole SSE body, as recorded (``[DONE]`` skipped)."""
    return response_from_events(sse_data(text))


def _check_chunk(chunk: Any, index: int) -> None:
    """The shape the SDK's stream state relies on (it warns, then fails, on anything else)."""
    what = f"stream chunk {index}"
    if not is_object(chunk):
        raise malformed(what, "the chunk", "a JSON object", chunk)
    choices = field(chunk, "choices")
    if choices is None:
        return
    if not isinstance(choices, (list, tuple)):
        raise malformed(what, "choices", "an array", choices)
    for n, choice in enumerate(choices):
        if not is_object(choice):
            raise malformed(what, f"choices[{n}]", "an object", choice)
        delta = field(choice, "delta")
        if delta is not None and not is_object(delta):
            raise malformed(what, f"choices[{n}].delta", "an object", delta)


# -- neutral -> body (the fake) ----------------------------------------------------------


def _usage(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens or usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _tool_calls(response: ModelResponse) -> list[dict[str, Any]]:
    return [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
        for call in response.message.tool_calls
    ]


def response_body(wire: WireRequest, response: ModelResponse, ids: IdSource) -> dict[str, Any]:
    """The ``chat.completion`` JSON for one model response."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": response.message.content,
        "refusal": response.message.refusal,
        "annotations": [],
    }
    if response.message.tool_calls:
        message["tool_calls"] = _tool_calls(response)
    return {
        "id": ids.next("chatcmpl-"),
        "object": "chat.completion",
        "created": now(),
        "model": wire.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": response.finish_reason,
            }
        ],
        "usage": _usage(response.usage),
        "service_tier": "default",
        "system_fingerprint": "fp_harness",
    }


def response_events(
    wire: WireRequest,
    response: ModelResponse,
    ids: IdSource,
    *,
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    max_chunks: int = DEFAULT_MAX_CHUNKS,
) -> list[SSEEvent]:
    """The events of one streamed response: role, content / refusal / tool-call deltas,
    finish, an optional usage-only chunk, then ``[DONE]``."""
    base: dict[str, Any] = {
        "id": ids.next("chatcmpl-"),
        "object": "chat.completion.chunk",
        "created": now(),
        "model": wire.model,
        "service_tier": "default",
        "system_fingerprint": "fp_harness",
    }

    def chunk(delta: Mapping[str, Any], finish: str | None = None) -> SSEEvent:
        data = {
            **base,
            "choices": [
                {"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish}
            ],
        }
        if wire.include_usage:
            data["usage"] = None
        return None, data

    message = response.message
    calls = _tool_calls(response)
    events: list[SSEEvent] = []
    first: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
    if message.content is not None or (not calls and message.refusal is None):
        first["content"] = ""
    elif message.refusal is not None:
        first["refusal"] = ""
    # like the API: a tool-call-only turn carries its first call header in the role chunk
    merge_first = bool(calls) and message.content is None and message.refusal is None
    for piece in words(message.content, max_chunks) if message.content else ():
        events.append(chunk({"content": piece}))
    for piece in words(message.refusal, max_chunks) if message.refusal else ():
        events.append(chunk({"refusal": piece}))
    for index, call in enumerate(calls):
        header = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        if index == 0 and merge_first:
            first["tool_calls"] = [header]
        else:
            events.append(chunk({"tool_calls": [header]}))
        for piece in _argument_pieces(call["function"]["arguments"], chunk_chars, max_chunks):
            events.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    events.insert(0, chunk(first))
    events.append(chunk({}, response.finish_reason))
    if wire.include_usage:
        events.append((None, {**base, "choices": [], "usage": _usage(response.usage)}))
    events.append((None, "[DONE]"))
    return events


def _argument_pieces(arguments: str, size: int, max_chunks: int) -> Sequence[str]:
    return [p for p in fragments(arguments, size, max_chunks) if p]
