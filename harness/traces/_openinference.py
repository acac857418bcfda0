"""OpenInference's attributes (Arize's instrumentations: ``openinference-instrumentation-*``).

``openinference.span.kind`` says what a span is: ``LLM`` (a model request), ``TOOL`` (a
tool call), ``AGENT`` (an agent run: a conversation), ``CHAIN`` and others (structure).
A request lists the history as ``llm.input_messages.N.message.{role, content, name,
tool_call_id, contents.M.message_content.{type, text},
tool_calls.M.tool_call.{id, function.name, function.arguments}}`` (arguments left out when
empty), the answer as ``llm.output_messages.N.message.*``, the tools as
``llm.tools.N.tool.json_schema`` (JSON text in the Chat Completions or the Anthropic
shape), the model as ``llm.model_name``, the provider as ``llm.provider``
(``llm.system``), and the request's parameters (``tool_choice``, ``stream``) as JSON in
``llm.invocation_parameters``. A tool span has ``tool.name``, its arguments in
``input.value`` and its result in ``output.value``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from harness.messages import Message, ToolCall
from harness.traces._facts import (
    MessageParts,
    RequestFacts,
    ToolFacts,
    UsageKeys,
    arguments_text,
    assistant_of,
    build_messages,
    indexed,
    tool_choice_of,
    tools_of,
    usage_from,
)
from harness.traces._spans import Span

__all__ = ["is_agent", "is_request", "is_tool", "request_facts", "tool_facts"]

KIND = "openinference.span.kind"


def is_request(span: Span) -> bool:
    return bool(span.get(KIND) == "LLM")


def is_tool(span: Span) -> bool:
    return bool(span.get(KIND) == "TOOL")


def is_agent(span: Span) -> bool:
    return bool(span.get(KIND) == "AGENT")


def _sub(fields: Mapping[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    groups: dict[int, dict[str, Any]] = {}
    for key, value in fields.items():
        if key.startswith(prefix):
            number, dot, rest = key[len(prefix) :].partition(".")
            if dot and number.isdigit():
                groups.setdefault(int(number), {})[rest] = value
    return dict(sorted(groups.items()))


def _parts(span: Span, fields: Mapping[str, Any], where: str) -> MessageParts:
    role = fields.get("message.role")
    out = MessageParts(role=role if isinstance(role, str) else "user")
    name = fields.get("message.name")
    out.name = name if isinstance(name, str) else None
    content = fields.get("message.content")
    if isinstance(content, str):
        out.texts.append(content)
    else:
        for block in _sub(fields, "message.contents.").values():
            if block.get("message_content.type") == "text":
                text = block.get("message_content.text")
                out.texts.append(text if isinstance(text, str) else "")
    for number, call in _sub(fields, "message.tool_calls.").items():
        name = call.get("tool_call.function.name")
        if not isinstance(name, str):
            raise span.error(f"{where}.message.tool_calls.{number} has no function name")
        call_id = call.get("tool_call.id")
        out.calls.append(
            ToolCall(
                id=str(call_id) if call_id is not None else f"{span.span_id}-{number}",
                name=name,
                arguments=arguments_text(call.get("tool_call.function.arguments")),
            )
        )
    if out.role == "tool":
        out.results.append((str(fields.get("message.tool_call_id", "")), "".join(out.texts)))
        out.texts = []
    return out


USAGE = UsageKeys(
    input=("llm.token_count.prompt",),
    output=("llm.token_count.completion",),
    total=("llm.token_count.total",),
    cache_read=("llm.token_count.prompt_details.cache_read",),
    cache_write=("llm.token_count.prompt_details.cache_write",),
)


def _history(span: Span, inputs: dict[int, dict[str, Any]]) -> tuple[Message, ...]:
    return build_messages(_parts(span, f, f"llm.input_messages.{n}") for n, f in inputs.items())


_LEADING_ID = re.compile(r'\s*\{\s*"id"\s*:\s*"([^"\\]{1,200})"')


def _response_id(span: Span) -> str | None:
    """The provider's response id: OpenInference keeps the response body in
    ``output.value``, whose first key the providers' bodies make ``id`` (read without
    parsing the whole body)."""
    if span.get("output.mime_type") != "application/json":
        return None
    body = span.get("output.value")
    found = _LEADING_ID.match(body) if isinstance(body, str) else None
    return found.group(1) if found else None


def request_facts(span: Span) -> RequestFacts:
    inputs = indexed(span, "llm.input_messages.")
    outputs = indexed(span, "llm.output_messages.")
    tools = indexed(span, "llm.tools.")
    definitions = None
    if tools:
        entries = []
        for number, fields in tools.items():
            schema = fields.get("tool.json_schema")
            where = f"llm.tools.{number}.tool.json_schema"
            entries.append(
                span.parse_json(schema, what=where) if isinstance(schema, str) else schema
            )
        definitions = tools_of(span, entries, what="llm.tools")
    parameters = span.json("llm.invocation_parameters")
    parameters = parameters if isinstance(parameters, dict) else {}
    output_parts = [_parts(span, f, f"llm.output_messages.{n}") for n, f in outputs.items()]
    finish = span.get("llm.finish_reason")
    model = span.get("llm.model_name") or span.get("llm.request.model_name")
    provider = span.get("llm.provider") or span.get("llm.system")
    return RequestFacts(
        span=span,
        flavour="openinference",
        model=model if isinstance(model, str) else None,
        provider=provider if isinstance(provider, str) else None,
        stream=parameters.get("stream") is True,
        tools=definitions,
        tool_choice=tool_choice_of(parameters.get("tool_choice")),
        messages=build_messages(
            _parts(span, f, f"llm.input_messages.{n}") for n, f in inputs.items()
        )
        if inputs
        else None,
        output=assistant_of(output_parts) if outputs else None,
        finish_reason=finish if isinstance(finish, str) else None,
        usage=usage_from(span, USAGE),
        response_id=_response_id(span),
        error="error" if span.status == "error" else None,
    )


def tool_facts(span: Span) -> ToolFacts:
    name = span.text("tool.name") or span.name
    arguments = span.get("input.value")
    result = span.get("output.value")
    call_id = span.text("tool_call.id")
    return ToolFacts(
        span=span,
        name=name,
        call_id=call_id,
        arguments=None if arguments is None else arguments_text(arguments),
        result=None if result is None else str(result),
        is_error=span.status == "error",
    )
