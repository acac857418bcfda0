"""The Anthropic Messages codec: neutral harness messages <-> Messages API bodies.

One implementation of the format, used by the adapter (requests out, responses in),
the wire fake (requests in, responses out, streamed and not) and recordings
(request and response bodies read back). Plain JSON in and out: no SDK needed.

- ``messages_params`` / ``request_from_body``: a ``ModelRequest`` <-> a request body.
- ``response_from_message`` / ``response_from_events`` / ``response_from_sse``: a
  response body (JSON, SSE events or SSE text) -> a ``ModelResponse``.
- ``message_body`` / ``message_events``: a ``ModelResponse`` -> the API's JSON or SSE.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from harness._errors import ProviderError
from harness.loop import FinishReason, ModelRequest, ModelResponse, ModelSettings, Usage
from harness.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "STOP_REASONS",
    "ThinkingKey",
    "message_body",
    "message_events",
    "message_key",
    "messages_params",
    "request_from_body",
    "response_from_body",
    "response_from_events",
    "response_from_message",
    "response_from_sse",
    "sse_events",
    "thinking_blocks",
    "tool_choice_param",
    "tool_definition",
]

DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` when neither the adapter nor the request sets one (the API requires it)."""

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
_KNOWN = frozenset({"model", "messages", "system", "tools", "tool_choice", "stream", "max_tokens"})
_REFUSED = "The model declined to answer (stop_reason='refusal')."

ThinkingKey = tuple[str, ...]


# -- requests: neutral -> body ----------------------------------------------------------


def tool_definition(definition: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI-style tool definition (the loop's format) as an Anthropic tool."""
    function = definition.get("function", definition)
    tool: dict[str, Any] = {"name": function["name"]}
    if function.get("description"):
        tool["description"] = function["description"]
    schema = function.get("parameters") or function.get("input_schema")
    tool["input_schema"] = dict(schema) if schema else {"type": "object", "properties": {}}
    return tool


def tool_choice_param(settings: ModelSettings) -> dict[str, Any] | None:
    """``tool_choice`` for the loop's setting (``auto``/``required``/``none``/a tool name, an
    OpenAI-style dict or an Anthropic one), with ``disable_parallel_tool_use``."""
    choice = settings.tool_choice
    out: dict[str, Any] | None
    if choice is None:
        out = None
    elif isinstance(choice, str):
        mapped = {"auto": "auto", "required": "any", "any": "any", "none": "none"}.get(choice)
        out = {"type": mapped} if mapped else {"type": "tool", "name": choice}
    elif choice.get("type") == "function" and isinstance(choice.get("function"), Mapping):
        out = {"type": "tool", "name": choice["function"].get("name")}
    else:
        out = dict(choice)
    if settings.parallel_tool_calls is False:
        out = out or {"type": "auto"}
        if out.get("type") != "none":
            out["disable_parallel_tool_use"] = True
    return out


def message_key(message: AssistantMessage) -> ThinkingKey:
    """Identifies an assistant turn in later histories (its call ids, else its text)."""
    if message.tool_calls:
        return ("calls", *(call.id for call in message.tool_calls))
    return ("text", message.content or "", message.refusal or "")


def _arguments(arguments: str) -> dict[str, Any]:
    """Tool-use ``input`` (an object) from the neutral JSON string; malformed text is kept."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {"_raw_arguments": arguments}
    return value if isinstance(value, dict) else {"_raw_arguments": arguments}


def _assistant_blocks(
    message: AssistantMessage, thinking: Mapping[ThinkingKey, Sequence[Mapping[str, Any]]]
) -> list[dict[str, Any]]:
    blocks = [dict(b) for b in thinking.get(message_key(message), ())]
    text = message.content if message.content else message.refusal
    if text:
        blocks.append({"type": "text", "text": text})
    for call in message.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": _arguments(call.arguments),
            }
        )
    if not blocks:
        blocks.append({"type": "text", "text": message.content or ""})
    return blocks


def _append(out: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    """Consecutive turns of one role become one message (the API alternates roles)."""
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(blocks)
    else:
        out.append({"role": role, "content": blocks})


def _messages(
    messages: Iterable[Message], thinking: Mapping[ThinkingKey, Sequence[Mapping[str, Any]]]
) -> tuple[list[str], list[dict[str, Any]]]:
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            system.append(message.content)
        elif isinstance(message, UserMessage):
            _append(out, "user", [{"type": "text", "text": message.content}])
        elif isinstance(message, ToolMessage):
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
            block["content"] = message.content
            if message.is_error:
                block["is_error"] = True
            _append(out, "user", [block])
        else:
            _append(out, "assistant", _assistant_blocks(message, thinking))
    for entry in out:  # a single text block reads better (and matches most SDK users) as a string
        blocks = entry["content"]
        if len(blocks) == 1 and blocks[0]["type"] == "text" and set(blocks[0]) == {"type", "text"}:
            entry["content"] = blocks[0]["text"]
    return system, out


def messages_params(
    request: ModelRequest,
    *,
    model: str,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    stream: bool = False,
    defaults: Mapping[str, Any] | None = None,
    thinking: Mapping[ThinkingKey, Sequence[Mapping[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The request body (= ``client.messages.create`` keyword arguments) for ``request``.

    System messages become ``system``; tool results become ``tool_result`` blocks of a
    user turn; consecutive turns of one role are merged. ``tools`` and ``tool_choice``
    are left out when no tool is offered. ``defaults`` apply first, the request's
    ``settings.extra`` overrides them; ``thinking`` maps assistant turns (``message_key``)
    to the thinking blocks to send back unchanged.
    """
    system, messages = _messages(request.messages, thinking or {})
    params: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
    if system:
        params["system"] = "\n\n".join(system)
    if request.tools:
        params["tools"] = [tool_definition(t) for t in request.tools]
        choice = tool_choice_param(request.settings)
        if choice is not None:
            params["tool_choice"] = choice
    params.update(defaults or {})
    params.update(request.settings.extra)
    if stream:
        params["stream"] = True
    return params


# -- requests: body -> neutral ----------------------------------------------------------


def _text(content: Any) -> str:
    """Text of a content value: a string, or the text of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, Mapping):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") not in (None, "text"):
                    parts.append(f"[{block['type']}]")
        return "\n".join(parts)
    return "" if content is None else str(content)


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or () if isinstance(b, Mapping)]


def _read_message(data: Mapping[str, Any]) -> list[Message]:
    blocks = _blocks(data.get("content"))
    if data.get("role") == "assistant":
        texts = [b["text"] for b in blocks if b.get("type") == "text" and "text" in b]
        calls = tuple(
            ToolCall(
                id=str(b.get("id")),
                name=str(b.get("name")),
                arguments=json.dumps(b.get("input") or {}),
            )
            for b in blocks
            if b.get("type") == "tool_use"
        )
        return [AssistantMessage(content="".join(texts) if texts else None, tool_calls=calls)]
    out: list[Message] = []
    texts = []
    for block in blocks:
        if block.get("type") == "tool_result":
            out.append(
                ToolMessage(
                    tool_call_id=str(block.get("tool_use_id")),
                    content=_text(block.get("content")),
                    is_error=block.get("is_error") is True,
                )
            )
        else:
            texts.append(_text([block]))
    if texts:
        out.append(UserMessage(content="\n".join(texts)))
    return out


def _settings_from_body(body: Mapping[str, Any]) -> ModelSettings:
    choice = body.get("tool_choice")
    neutral: str | None = None
    parallel: bool | None = None
    if isinstance(choice, Mapping):
        kind = choice.get("type")
        neutral = {"auto": "auto", "any": "required", "none": "none"}.get(str(kind))
        if kind == "tool":
            neutral = str(choice.get("name"))
        if choice.get("disable_parallel_tool_use") is True:
            parallel = False
    return ModelSettings(
        tool_choice=neutral,
        parallel_tool_calls=parallel,
        extra={k: v for k, v in body.items() if k not in _KNOWN},
    )


def request_from_body(body: Mapping[str, Any]) -> ModelRequest:
    """The neutral request for a Messages request body (no validation: see the wire fake).

    Tools come back in the loop's OpenAI-style format; thinking and other non-text blocks
    of user turns are kept as ``[type]`` markers, thinking blocks of assistant turns are
    dropped.
    """
    messages: list[Message] = []
    system = body.get("system")
    if system:
        messages.append(SystemMessage(content=_text(system)))
    for data in body.get("messages") or ():
        if isinstance(data, Mapping):
            messages.extend(_read_message(data))
    tools: list[dict[str, Any]] = [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                **({"description": t["description"]} if t.get("description") else {}),
                "parameters": t.get("input_schema") or {"type": "object", "properties": {}},
            },
        }
        for t in body.get("tools") or ()
        if isinstance(t, Mapping) and t.get("type", "custom") == "custom" and "name" in t
    ]
    return ModelRequest(
        messages=messages,
        tools=tools,
        tool_names=tuple(str(t["function"]["name"]) for t in tools),
        settings=_settings_from_body(body),
        iteration=1 + sum(1 for m in messages if isinstance(m, AssistantMessage)),
    )


# -- responses: body -> neutral ---------------------------------------------------------


def _plain(data: Any) -> Any:
    """SDK objects (pydantic) as plain JSON data."""
    dump = getattr(data, "model_dump", None)
    return dump(mode="json", exclude_none=False) if callable(dump) else data


def _usage(raw: Mapping[str, Any] | None) -> Usage:
    raw = raw or {}
    read = int(raw.get("cache_read_input_tokens") or 0)
    write = int(raw.get("cache_creation_input_tokens") or 0)
    inputs = int(raw.get("input_tokens") or 0) + read + write
    outputs = int(raw.get("output_tokens") or 0)
    return Usage(
        input_tokens=inputs,
        output_tokens=outputs,
        total_tokens=inputs + outputs,
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


def response_from_message(message: Any) -> ModelResponse:
    """The harness response for a Messages response (``anthropic.types.Message`` or its JSON).

    Text blocks are joined; ``tool_use`` blocks become tool calls with their ``input`` as a
    JSON string; a ``refusal`` stop puts the text in ``message.refusal``. Thinking blocks
    are not part of the neutral message: read them with ``thinking_blocks``.
    """
    data = _plain(message)
    if not isinstance(data, Mapping) or data.get("type", "message") != "message":
        raise ProviderError(
            f"expected an Anthropic message object, got {data!r:.200}", code="invalid_response"
        )
    blocks = _blocks(data.get("content"))
    text = "".join(
        b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    )
    calls = tuple(
        ToolCall(id=str(b["id"]), name=str(b["name"]), arguments=json.dumps(b.get("input") or {}))
        for b in blocks
        if b.get("type") == "tool_use"
    )
    stop = data.get("stop_reason") or "end_turn"
    finish = STOP_REASONS.get(str(stop), "stop")
    if finish == "content_filter":
        assistant = AssistantMessage(content=None, tool_calls=calls, refusal=text or _REFUSED)
    else:
        assistant = AssistantMessage(content=text or None, tool_calls=calls)
    return ModelResponse(
        message=assistant,
        finish_reason=finish,
        usage=_usage(data.get("usage")),
        model_name=data.get("model"),
    )


def thinking_blocks(message: Any) -> list[dict[str, Any]]:
    """The ``thinking`` / ``redacted_thinking`` blocks of a response, to send back unchanged."""
    data = _plain(message)
    return [dict(b) for b in _blocks(data.get("content")) if b.get("type") in _THINKING]


def accumulate(events: Iterable[Any]) -> dict[str, Any]:
    """The final message JSON of a stream of Messages events (dicts or SDK event objects)."""
    message: dict[str, Any] | None = None
    partial: dict[int, str] = {}
    for raw in events:
        event = _plain(raw)
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
            continue
        if message is None:
            continue
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
    if message is None:
        raise ProviderError(
            "the stream ended before its message_start event", code="empty_response"
        )
    return message


def response_from_events(events: Iterable[Any]) -> ModelResponse:
    """Accumulate streamed events (dicts or SDK objects) into the harness response."""
    return response_from_message(accumulate(events))


def sse_events(text: str | bytes) -> Iterator[dict[str, Any]]:
    """The JSON ``data`` of each server-sent event in ``text`` (``ping`` included)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    data: list[str] = []
    for line in [*text.splitlines(), ""]:
        if not line:
            if data:
                yield json.loads("\n".join(data))
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))


def response_from_sse(text: str | bytes) -> ModelResponse:
    """The harness response for a whole SSE body, as recorded (padded JSON and pings fine)."""
    return response_from_events(sse_events(text))


def response_from_body(
    body: str | bytes, *, content_type: str = "application/json"
) -> ModelResponse:
    """The harness response for a recorded (already decompressed) response body: SSE when
    ``content_type`` is ``text/event-stream``, else the message JSON."""
    if content_type.lower().startswith("text/event-stream"):
        return response_from_sse(body)
    return response_from_message(json.loads(body))


# -- responses: neutral -> body (the wire fake) -----------------------------------------


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
    text = message.refusal if response.finish_reason == "content_filter" else message.content
    text = text or message.content or message.refusal
    if text:
        blocks.append({"type": "text", "text": text})
    for call in message.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": _arguments(call.arguments),
            }
        )
    return blocks


def _stop_out(response: ModelResponse) -> str:
    if response.message.tool_calls:
        return "tool_use"
    return _STOP_OUT.get(response.finish_reason, "end_turn")


def message_body(response: ModelResponse, *, model: str, message_id: str) -> dict[str, Any]:
    """The Messages response JSON for ``response``."""
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


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def message_events(
    response: ModelResponse, *, model: str, message_id: str, chunk_chars: int = 8
) -> list[tuple[str, dict[str, Any]]]:
    """The ``(event, data)`` pairs the API streams for ``response``, in its order:
    ``message_start``, per block ``content_block_start`` / ``..._delta`` / ``..._stop``
    (a ``ping`` after the first start), ``message_delta``, ``message_stop``."""
    start = message_body(response, model=model, message_id=message_id)
    usage = dict(start["usage"])
    start.update(content=[], stop_reason=None)
    start["usage"] = {**usage, "output_tokens": min(1, usage["output_tokens"])}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(_content_out(response)):
        if block["type"] == "text":
            opened: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _words(block["text"])]
        else:
            opened = {**block, "input": {}}
            arguments = json.dumps(block["input"]) if block["input"] else ""
            deltas = [{"type": "input_json_delta", "partial_json": ""}] + [
                {"type": "input_json_delta", "partial_json": p}
                for p in _pieces(arguments, max(1, chunk_chars))
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
