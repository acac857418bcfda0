"""The flat attributes of OpenLLMetry's older releases (``opentelemetry-instrumentation-
openai``/``-anthropic`` before they wrote the current ``gen_ai.*`` conventions).

A request span lists the history as ``gen_ai.prompt.N.{role, content, tool_call_id,
tool_calls.M.{id, name, arguments}}``, the answer as ``gen_ai.completion.N.*`` (with
``finish_reason``), and the tools as ``llm.request.functions.N.{name, description,
parameters}`` (``input_schema`` for Anthropic). A ``content`` may be a JSON list of
content blocks (Anthropic's ``tool_result`` blocks carry the tool results): those are read
by the Messages format. The model is ``gen_ai.request.model``, the provider
``gen_ai.system``, streaming ``llm.is_streaming``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness.formats import anthropic_messages
from harness.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from harness.traces._facts import (
    RequestFacts,
    UsageKeys,
    arguments_text,
    indexed,
    tools_of,
    usage_from,
)
from harness.traces._spans import Span

__all__ = ["is_request", "request_facts"]

_PREFIXES = ("gen_ai.prompt.", "gen_ai.completion.", "llm.request.functions.")


def is_request(span: Span) -> bool:
    return span.get("llm.request.type") in ("chat", "completion") or any(
        key.startswith(_PREFIXES) for key in span.attributes
    )


def _calls(span: Span, fields: Mapping[str, Any], where: str) -> tuple[ToolCall, ...]:
    groups: dict[int, dict[str, Any]] = {}
    for key, value in fields.items():
        if key.startswith("tool_calls."):
            index, _, rest = key[len("tool_calls.") :].partition(".")
            if index.isdigit():
                groups.setdefault(int(index), {})[rest] = value
    calls = []
    for number, call in sorted(groups.items()):
        name = call.get("name")
        if not isinstance(name, str):
            raise span.error(f"{where}.tool_calls.{number} has no name")
        call_id = call.get("id")
        calls.append(
            ToolCall(
                id=str(call_id) if call_id is not None else f"{span.span_id}-{number}",
                name=name,
                arguments=arguments_text(call.get("arguments")),
            )
        )
    return tuple(calls)


def _blocks(span: Span, content: Any, where: str) -> list[Any] | None:
    """A content that is a JSON list of content blocks, else ``None`` (plain text)."""
    if not isinstance(content, str) or not content.startswith("["):
        return None
    try:
        value = span.parse_json(content, what=f"{where}.content")
    except Exception:  # text that merely starts with a bracket
        return None
    if (
        isinstance(value, list)
        and value
        and all(isinstance(b, dict) and "type" in b for b in value)
    ):
        return value
    return None


def _is_block(value: Any) -> bool:
    return isinstance(value, dict) and "type" in value


def _message(span: Span, fields: Mapping[str, Any], where: str) -> list[Message]:
    role = fields.get("role")
    content = fields.get("content")
    calls = _calls(span, fields, where)
    if role == "tool":
        return [
            ToolMessage(
                tool_call_id=str(fields.get("tool_call_id", "")), content=str(content or "")
            )
        ]
    blocks = _blocks(span, content, where)
    if blocks is not None:
        read = anthropic_messages.read_request(
            {
                "messages": [
                    {"role": "assistant" if role == "assistant" else "user", "content": blocks}
                ]
            }
        ).messages
        if role == "assistant" and calls:
            texts = [m.content for m in read if isinstance(m, AssistantMessage) and m.content]
            return [AssistantMessage(content="".join(texts) or None, tool_calls=calls)]
        if role == "system":
            return [SystemMessage(content=" ".join(str(m.content) for m in read))]
        return list(read)
    text = content if isinstance(content, str) else None if content is None else json.dumps(content)
    if role == "assistant":
        return [AssistantMessage(content=text, tool_calls=calls)] if text or calls else []
    if role == "system":
        return [SystemMessage(content=text or "")]
    return [UserMessage(content=text or "")]


USAGE = UsageKeys(
    input=("gen_ai.usage.prompt_tokens",),
    output=("gen_ai.usage.completion_tokens",),
    total=("llm.usage.total_tokens",),
    cache_read=("gen_ai.usage.cache_read_input_tokens",),
    cache_write=("gen_ai.usage.cache_creation_input_tokens",),
)


def request_facts(span: Span) -> RequestFacts:
    prompts = indexed(span, "gen_ai.prompt.")
    completions = indexed(span, "gen_ai.completion.")
    functions = indexed(span, "llm.request.functions.")
    messages: list[Message] = []
    for number, fields in prompts.items():
        messages.extend(_message(span, fields, f"gen_ai.prompt.{number}"))
    output = None
    finish = None
    if completions:
        number, first = next(iter(completions.items()))
        answer = _message(span, {**first, "role": "assistant"}, f"gen_ai.completion.{number}")
        output = next((m for m in answer if isinstance(m, AssistantMessage)), AssistantMessage())
        finish = first.get("finish_reason") if isinstance(first.get("finish_reason"), str) else None
    tools = None
    if functions:
        entries = []
        for fields in functions.values():
            schema = fields.get("parameters", fields.get("input_schema"))
            if isinstance(schema, str):
                schema = span.parse_json(schema, what="llm.request.functions.N.parameters")
            entries.append(
                {
                    "name": fields.get("name"),
                    "description": fields.get("description"),
                    "parameters": schema if isinstance(schema, dict) else {},
                }
            )
        tools = tools_of(span, entries, what="llm.request.functions")
    model = span.get("gen_ai.request.model") or span.get("gen_ai.response.model")
    provider = span.get("gen_ai.system")
    return RequestFacts(
        span=span,
        flavour="openllmetry",
        model=model if isinstance(model, str) else None,
        provider=provider.lower() if isinstance(provider, str) else None,
        stream=span.get("llm.is_streaming") is True,
        tools=tools,
        messages=tuple(messages) if prompts else None,
        output=output,
        finish_reason=finish,
        usage=usage_from(span, USAGE),
        response_id=span.text("gen_ai.response.id"),
        error=span.text("error.type") or ("error" if span.status == "error" else None),
    )
