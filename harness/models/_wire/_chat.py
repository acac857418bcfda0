"""Chat Completions on the wire: request parsing and JSON / SSE rendering of model responses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness._errors import UsageError
from harness.loop import ModelRequest, ModelResponse, ModelSettings
from harness.messages import Message, from_openai
from harness.models._wire._common import (
    DEFAULT_CHUNK_CHARS,
    DEFAULT_MAX_CHUNKS,
    AcceptedHistory,
    IdSource,
    WireRequest,
    count_iteration,
    fragments,
    invalid_type,
    now,
    require_model,
    require_stream,
    sse,
    text_of,
    usage_chat,
    words,
)
from harness.models._wire._errors import WireError
from harness.models._wire._validation import (
    Profile,
    validate_history,
    validate_strict,
    validate_tools,
)

__all__ = ["parse_chat_request", "render_chat", "stream_chat"]

_ROLES = ("system", "developer", "user", "assistant", "tool")
_KNOWN = frozenset(
    {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "response_format",
        "stream",
        "stream_options",
    }
)


def _message(data: Any, index: int) -> Message:
    where = f"messages[{index}]"
    if not isinstance(data, Mapping):
        raise WireError(
            400,
            f"Invalid type for '{where}': expected an object, but got "
            f"{type(data).__name__} instead.",
            param=where,
            code="invalid_type",
        )
    role = data.get("role")
    if role not in _ROLES:
        raise WireError(
            400,
            f"Invalid value: {role!r}. Supported values are: 'system', 'assistant', 'user', "
            "'function', 'tool', and 'developer'.",
            param=f"{where}.role",
            code="invalid_value",
        )
    content = text_of(data.get("content"), f"{where}.content")
    clean: dict[str, Any] = {"role": "system" if role == "developer" else role}
    if role == "assistant":
        clean["content"] = content
        if data.get("tool_calls"):
            clean["tool_calls"] = data["tool_calls"]
        if isinstance(data.get("refusal"), str):
            clean["refusal"] = data["refusal"]
    elif role == "tool":
        clean.update(content=content or "", tool_call_id=data.get("tool_call_id"))
    else:
        if content is None:
            raise WireError(
                400,
                f"Missing required parameter: '{where}.content'.",
                param=f"{where}.content",
                code="missing_required_parameter",
            )
        clean["content"] = content
    try:
        return from_openai(clean)
    except UsageError as exc:
        raise WireError(
            400, f"Invalid '{where}': {exc}", param=where, code="invalid_value"
        ) from None


def _settings(body: Mapping[str, Any]) -> ModelSettings:
    output_schema = None
    output_name = None
    response_format = body.get("response_format")
    if isinstance(response_format, Mapping) and response_format.get("type") == "json_schema":
        spec = response_format.get("json_schema") or {}
        output_schema = spec.get("schema")
        output_name = spec.get("name")
    return ModelSettings(
        tool_choice=body.get("tool_choice"),
        parallel_tool_calls=body.get("parallel_tool_calls"),
        output_schema=output_schema,
        output_name=output_name,
        extra={k: v for k, v in body.items() if k not in _KNOWN},
    )


def parse_chat_request(
    body: Mapping[str, Any],
    *,
    profile: Profile = "default",
    accepted: AcceptedHistory | None = None,
) -> WireRequest:
    """Validate a ``POST /v1/chat/completions`` body like the API; ``WireError`` if invalid.

    With ``accepted`` (the previous accepted history), a body that repeats it only
    has its new messages parsed and validated.
    """
    model = require_model(body)
    raw_messages = body.get("messages")
    if raw_messages is not None and not isinstance(raw_messages, list):
        raise invalid_type("messages", "an array", raw_messages)
    stream = require_stream(body)
    if not isinstance(raw_messages, list) or not raw_messages:
        raise WireError(
            400,
            "Missing required parameter: 'messages'."
            if raw_messages is None
            else "Invalid 'messages': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.",
            param="messages",
            code="missing_required_parameter" if raw_messages is None else "empty_array",
        )
    reuse = accepted.reusable(raw_messages) if accepted is not None else 0
    messages = list(accepted.messages[:reuse]) if accepted is not None else []
    messages.extend(_message(m, i) for i, m in enumerate(raw_messages[reuse:], reuse))
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        raise WireError(400, "Invalid type for 'tools': expected an array.", param="tools")
    validate_tools(tools, api="chat")
    validate_history(messages, api="chat", start=reuse)
    names = tuple(str(t["function"]["name"]) for t in tools)
    if profile == "strict":
        validate_strict(messages, names, api="chat")
    stream_options = body.get("stream_options") or {}
    return WireRequest(
        model=model,
        request=ModelRequest(
            messages=messages,
            tools=[dict(t) for t in tools],
            tool_names=names,
            settings=_settings(body),
            iteration=(accepted.assistants if reuse and accepted is not None else 0)
            + count_iteration(messages[reuse:]),
        ),
        stream=stream,
        include_usage=bool(stream_options.get("include_usage")),
        body=body,
    )


def _tool_calls(response: ModelResponse) -> list[dict[str, Any]]:
    return [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
        for call in response.message.tool_calls
    ]


def render_chat(wire: WireRequest, response: ModelResponse, ids: IdSource) -> dict[str, Any]:
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
        "usage": usage_chat(response.usage),
        "service_tier": "default",
        "system_fingerprint": "fp_harness",
    }


def stream_chat(
    wire: WireRequest,
    response: ModelResponse,
    ids: IdSource,
    *,
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    max_chunks: int = DEFAULT_MAX_CHUNKS,
) -> list[bytes]:
    """The SSE events of one response: role, content / refusal / tool-call deltas, finish,
    an optional usage-only chunk, then ``data: [DONE]``."""
    base: dict[str, Any] = {
        "id": ids.next("chatcmpl-"),
        "object": "chat.completion.chunk",
        "created": now(),
        "model": wire.model,
        "service_tier": "default",
        "system_fingerprint": "fp_harness",
    }

    def chunk(delta: Mapping[str, Any], finish: str | None = None) -> bytes:
        data = {
            **base,
            "choices": [
                {"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish}
            ],
        }
        if wire.include_usage:
            data["usage"] = None
        return sse(data)

    message = response.message
    calls = _tool_calls(response)
    events: list[bytes] = []
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
        events.append(sse({**base, "choices": [], "usage": usage_chat(response.usage)}))
    events.append(sse("[DONE]"))
    return events


def _argument_pieces(arguments: str, size: int, max_chunks: int) -> Sequence[str]:
    return [p for p in fragments(arguments, size, max_chunks) if p]
