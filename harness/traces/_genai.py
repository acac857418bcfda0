"""The current OpenTelemetry GenAI conventions (``gen_ai.*``), read from spans and written.

An inference span (``gen_ai.operation.name`` ``chat``, ``text_completion`` or
``generate_content``) holds the request: ``gen_ai.request.model``,
``gen_ai.provider.name`` (``gen_ai.system`` before it), ``gen_ai.tool.definitions``,
``gen_ai.system_instructions``, ``gen_ai.input.messages`` and ``gen_ai.output.messages``
(messages of ``{role, parts}``; parts ``text``, ``tool_call``, ``tool_call_response``), as
structured values or JSON text, and the usage. Definitions and content are opt-in:
whatever a span leaves out is unknown. Tool-call arguments are an object or a JSON string
(both occur), a tool result is ``response`` (the schema) or ``result`` (pydantic-ai).
Tool definitions may be written in any provider's shape (OpenLLMetry writes Anthropic's).

An ``execute_tool`` span is one tool call (``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
opt-in ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``); an
``invoke_agent`` span is one agent run (a conversation).
"""

from __future__ import annotations

from typing import Any

from harness.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage
from harness.traces._facts import (
    MessageParts,
    RequestFacts,
    ToolFacts,
    UsageKeys,
    arguments_text,
    assistant_of,
    build_messages,
    redacted_of,
    result_text,
    tools_of_text,
    usage_from,
)
from harness.traces._spans import Span

__all__ = [
    "is_agent",
    "is_request",
    "is_tool",
    "message_data",
    "output_data",
    "request_facts",
    "tool_facts",
]

INFERENCE = frozenset({"chat", "text_completion", "generate_content", "responses"})
"""``gen_ai.operation.name`` values of a model request."""
_CONTENT_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions")


def is_request(span: Span) -> bool:
    operation = span.get("gen_ai.operation.name")
    if isinstance(operation, str) and operation in INFERENCE:
        return True
    return operation is None and any(k in span.attributes for k in _CONTENT_KEYS)


def is_tool(span: Span) -> bool:
    return bool(span.get("gen_ai.operation.name") == "execute_tool")


def is_agent(span: Span) -> bool:
    return span.get("gen_ai.operation.name") in ("invoke_agent", "invoke_workflow")


def _parts(span: Span, message: Any, what: str) -> MessageParts:
    if not isinstance(message, dict):
        raise span.error(f"{what} should be a message object, got {message!r:.80}")
    role = message.get("role")
    out = MessageParts(role=role if isinstance(role, str) else "user")
    name = message.get("name")
    out.name = name if isinstance(name, str) else None
    parts = message.get("parts")
    if parts is None and isinstance(message.get("content"), str):  # a flat message
        out.texts.append(message["content"])
        return out
    if not isinstance(parts, list):
        raise span.error(f"{what}.parts should be a list, got {parts!r:.80}")
    for k, part in enumerate(parts):
        if not isinstance(part, dict):
            raise span.error(f"{what}.parts[{k}] should be an object, got {part!r:.80}")
        kind = part.get("type")
        if kind == "text":
            content = part.get("content")
            if content is None:
                out.redacted.add("message text")
            out.texts.append(content if isinstance(content, str) else _text_of(content))
        elif kind == "tool_call":
            name = part.get("name")
            if not isinstance(name, str):
                raise span.error(f"{what}.parts[{k}]: a tool_call without a name")
            call_id = part.get("id")
            arguments = part.get("arguments")
            if arguments is None:
                out.redacted.add("tool arguments")
            out.calls.append(
                ToolCall(
                    id=str(call_id) if call_id is not None else f"{span.span_id}-{k}",
                    name=name,
                    arguments="" if arguments is None else arguments_text(arguments),
                )
            )
        elif kind == "tool_call_response":
            response = part.get("response", part.get("result"))
            if response is None:
                out.redacted.add("tool results")
            out.results.append((str(part.get("id", "")), _text_of(response)))
        # reasoning, media and provider-specific parts say nothing about tools
    return out


def _text_of(value: Any) -> str:
    return "" if value is None else result_text(value)


def _messages(span: Span, key: str) -> list[MessageParts] | None:
    value = span.json(key)
    if value is None:
        return None
    if not isinstance(value, list):
        raise span.error(f"attribute {key!r} should be a list of messages, got {value!r:.80}")
    return [_parts(span, m, f"{key}[{k}]") for k, m in enumerate(value)]


def _system(span: Span) -> list[MessageParts]:
    value = span.json("gen_ai.system_instructions")
    if value is None:
        return []
    if isinstance(value, str):
        return [MessageParts(role="system", texts=[value])]
    if not isinstance(value, list):
        raise span.error(
            f"attribute 'gen_ai.system_instructions' should be a list, got {value!r:.80}"
        )
    texts = [
        p["content"] for p in value if isinstance(p, dict) and isinstance(p.get("content"), str)
    ]
    return [MessageParts(role="system", texts=texts)] if texts else []


USAGE = UsageKeys(
    input=("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"),
    output=("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"),
    total=("gen_ai.usage.total_tokens",),
    cache_read=("gen_ai.usage.cache_read.input_tokens",),
    cache_write=(
        "gen_ai.usage.cache_creation.input_tokens",
        "gen_ai.usage.cache_write.input_tokens",
    ),
)


def _first_text(span: Span, *keys: str) -> str | None:
    for key in keys:
        value = span.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def request_facts(span: Span, flavour: str = "gen_ai") -> RequestFacts:
    inputs = _messages(span, "gen_ai.input.messages")
    outputs = _messages(span, "gen_ai.output.messages")
    definitions = tools_of_text(span, "gen_ai.tool.definitions")
    reasons = span.get("gen_ai.response.finish_reasons")
    finish = None
    if isinstance(reasons, list) and reasons and isinstance(reasons[0], str):
        finish = reasons[0]
    elif outputs:
        raw = span.json("gen_ai.output.messages")
        first = raw[0] if isinstance(raw, list) and raw else None
        reason = first.get("finish_reason") if isinstance(first, dict) else None
        finish = reason if isinstance(reason, str) else None
    stream = span.get("gen_ai.request.stream", span.get("gen_ai.is_streaming"))
    error = span.text("error.type") or ("error" if span.status == "error" else None)
    return RequestFacts(
        span=span,
        flavour=flavour,
        model=_first_text(span, "gen_ai.request.model", "gen_ai.response.model"),
        provider=_first_text(span, "gen_ai.provider.name", "gen_ai.system"),
        stream=stream is True,
        tools=definitions,
        messages=None if inputs is None else build_messages([*_system(span), *inputs]),
        redacted=redacted_of([*(inputs or ()), *(outputs or ())]),
        output=None if outputs is None else assistant_of(outputs),
        finish_reason=finish,
        usage=usage_from(span, USAGE),
        response_id=_first_text(span, "gen_ai.response.id"),
        error=error,
    )


def tool_facts(span: Span) -> ToolFacts:
    name = span.text("gen_ai.tool.name")
    if not name:
        raise span.error("an execute_tool span without gen_ai.tool.name")
    arguments = span.get("gen_ai.tool.call.arguments")
    result = span.get("gen_ai.tool.call.result")
    return ToolFacts(
        span=span,
        name=name,
        call_id=span.text("gen_ai.tool.call.id"),
        arguments=None if arguments is None else arguments_text(arguments),
        result=None if result is None else result_text(result),
        is_error=span.status == "error" or span.get("error.type") is not None,
    )


def _text(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content}


def message_data(message: Message) -> dict[str, Any]:
    """One harness message as a ``gen_ai.input.messages`` entry (arguments as the JSON text
    the model sent: the conventions allow it, and it keeps malformed arguments as they were)."""
    if isinstance(message, ToolMessage):
        part = {
            "type": "tool_call_response",
            "id": message.tool_call_id,
            "response": message.content,
        }
        return {"role": "tool", "parts": [part]}
    if isinstance(message, AssistantMessage):
        return {"role": "assistant", "parts": _assistant_parts(message)}
    role = "system" if isinstance(message, SystemMessage) else "user"
    return {"role": role, "parts": [_text(str(message.content))]}


def _assistant_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    parts = [_text(message.content)] if message.content is not None else []
    parts.extend(
        {"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments}
        for c in message.tool_calls
    )
    return parts


def output_data(message: AssistantMessage, finish_reason: str | None) -> list[dict[str, Any]]:
    """The model's answer as ``gen_ai.output.messages`` (one choice)."""
    entry: dict[str, Any] = {"role": "assistant", "parts": _assistant_parts(message)}
    if finish_reason is not None:
        entry["finish_reason"] = finish_reason
    return [entry]
