"""What a span says about a model request or a tool call, in the neutral model.

Each attribute flavour (``_genai``, ``_openllmetry``, ``_openinference``, ``_harness``)
reads its spans into these records; everything after that (conversations, the
``Trace``, ``show``, scenarios) reads only the records. A fact the span does not hold is
``None`` (unknown), never an empty value: a request whose tool definitions were not
recorded offered *unknown* tools, not none.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness._errors import HarnessError
from harness.formats._format import tool_choice_from_any_param, tool_from_any_param
from harness.formats._server import WireError
from harness.loop import Usage
from harness.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from harness.tools import ToolChoice, ToolDefinition
from harness.traces._spans import Span

__all__ = [
    "MessageParts",
    "RequestFacts",
    "ToolFacts",
    "UsageKeys",
    "arguments_text",
    "build_messages",
    "int_of",
    "merge_facts",
    "tool_choice_of",
    "tools_of",
    "tools_of_text",
    "usage_from",
]


@dataclasses.dataclass(frozen=True, kw_only=True)
class RequestFacts:
    """One model request as a span recorded it."""

    span: Span
    flavour: str
    """Which attribute flavour described it (``gen_ai``, ``openllmetry``, ``openinference``,
    ``harness``)."""
    model: str | None = None
    provider: str | None = None
    stream: bool = False
    tools: tuple[ToolDefinition, ...] | None = None
    """The tools offered (``None``: not recorded)."""
    tool_choice: ToolChoice | None = None
    messages: tuple[Message, ...] | None = None
    """The history sent (``None``: not recorded)."""
    output: AssistantMessage | None = None
    """The model's answer (``None``: not recorded)."""
    finish_reason: str | None = None
    usage: Usage | None = None
    response_id: str | None = None
    error: str | None = None
    """Why the request failed (``error.type`` or the span's error status), if it did."""
    redacted: frozenset[str] = frozenset()
    """Content the messages have the shape of but not the values (``message text``,
    ``tool arguments``, ``tool results``): recorded with content capture off."""
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Flavour-specific facts (the harness's own attributes)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ToolFacts:
    """One tool execution as a span recorded it."""

    span: Span
    name: str
    call_id: str | None = None
    arguments: str | None = None
    """The arguments as JSON text (``None``: not recorded)."""
    result: str | None = None
    """What the tool returned, as text (``None``: not recorded)."""
    is_error: bool = False


def merge_facts(outer: RequestFacts, inner: RequestFacts) -> RequestFacts:
    """One request recorded by two stacked instrumentations: the outer span's facts, each
    unknown one taken from the inner span."""
    fields = {
        f.name: getattr(inner, f.name)
        for f in dataclasses.fields(RequestFacts)
        if getattr(outer, f.name) is None and f.name not in ("span", "flavour")
    }
    if outer.redacted and inner.messages is not None and len(inner.redacted) < len(outer.redacted):
        fields.update(messages=inner.messages, output=inner.output, redacted=inner.redacted)
    if not outer.stream and inner.stream:
        fields["stream"] = True
    return dataclasses.replace(outer, **fields) if fields else outer


def arguments_text(value: Any) -> str:
    """Tool-call arguments as JSON text: conventions write an object or a JSON string, and
    instrumentations do both."""
    if value is None:
        return "{}"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def result_text(value: Any) -> str:
    """A tool result as the text the model read (structured results as JSON)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


_TOOLS_SEEN: dict[str, tuple[ToolDefinition, ...]] = {}
"""Definitions already read, by their JSON text: an agent sends the same tools on most
requests, and reading them is most of what a request costs (bounded: ``_TOOLS_SEEN_MAX``)."""
_TOOLS_SEEN_MAX = 512


def tools_of_text(span: Span, key: str) -> tuple[ToolDefinition, ...] | None:
    """The tool definitions of attribute ``key`` (JSON text or structured), ``None`` when
    the span has none."""
    raw = span.get(key)
    if raw is None:
        return None
    if isinstance(raw, str):
        found = _TOOLS_SEEN.get(raw)
        if found is not None:
            return found
        tools = tools_of(span, span.parse_json(raw, what=f"attribute {key!r}"), what=key)
        if len(_TOOLS_SEEN) >= _TOOLS_SEEN_MAX:
            _TOOLS_SEEN.clear()
        _TOOLS_SEEN[raw] = tools
        return tools
    return tools_of(span, raw, what=key)


def tools_of(span: Span, entries: Any, *, what: str) -> tuple[ToolDefinition, ...]:
    """Tool definitions from a list of entries in any built-in format's shape."""
    if not isinstance(entries, list):
        raise span.error(f"{what} should be a list of tool definitions, got {entries!r:.80}")
    out = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise span.error(f"{what}[{index}] should be a tool definition, got {entry!r:.80}")
        try:
            out.append(tool_from_any_param(entry))
        except (WireError, HarnessError, ValueError, TypeError) as exc:
            raise span.error(f"{what}[{index}] is not a tool definition: {exc}") from None
    return tuple(out)


def tool_choice_of(value: Any) -> ToolChoice | None:
    """A provider's ``tool_choice`` (a string or any format's dict) as the neutral choice."""
    if isinstance(value, str) and value in ("auto", "none", "required"):
        return ToolChoice.of(value)
    if isinstance(value, Mapping):
        return tool_choice_from_any_param(value)
    return None


@dataclasses.dataclass(kw_only=True)
class MessageParts:
    """One message as the conventions split it: a role and its pieces, in order."""

    role: str
    texts: list[str] = dataclasses.field(default_factory=list)
    calls: list[ToolCall] = dataclasses.field(default_factory=list)
    results: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    """``(call id, result text)`` of each tool result the message carries."""
    name: str | None = None
    redacted: set[str] = dataclasses.field(default_factory=set)
    """What this message's parts left out (see ``RequestFacts.redacted``)."""


def redacted_of(parts: Iterable[MessageParts]) -> frozenset[str]:
    """Everything the messages left out."""
    return frozenset(item for message in parts for item in message.redacted)


def build_messages(parts: Iterable[MessageParts]) -> tuple[Message, ...]:
    """Harness messages from the conventions' role-and-parts messages: a tool result is a
    ``ToolMessage`` whatever role carried it (``tool``, or ``user`` as Anthropic and
    pydantic-ai write them), before the text the same message held."""
    out: list[Message] = []
    for message in parts:
        for call_id, text in message.results:
            out.append(ToolMessage(tool_call_id=call_id, content=text, name=message.name))
        text = "".join(message.texts)
        if message.role == "assistant":
            if message.texts or message.calls:
                out.append(
                    AssistantMessage(
                        content=text if message.texts else None, tool_calls=tuple(message.calls)
                    )
                )
        elif message.role == "system" or message.role == "developer":
            out.append(SystemMessage(content=text))
        elif message.role == "tool":
            continue  # its results are above (a tool message without an id has no call)
        elif message.texts or not message.results:
            out.append(UserMessage(content=text))
    return tuple(out)


def assistant_of(parts: Sequence[MessageParts]) -> AssistantMessage | None:
    """The first assistant message among ``parts`` (the first choice), or ``None``."""
    for message in parts:
        if message.role == "assistant" or message.calls:
            return AssistantMessage(
                content="".join(message.texts) if message.texts else None,
                tool_calls=tuple(message.calls),
            )
    return None


def indexed(span: Span, prefix: str) -> dict[int, dict[str, Any]]:
    """The flat attributes ``{prefix}{N}.{rest}`` of ``span`` grouped by ``N`` (ascending):
    ``{N: {rest: value}}``. The flat flavours write lists this way."""
    groups: dict[int, dict[str, Any]] = {}
    size = len(prefix)
    for key in span.attributes:
        if not key.startswith(prefix):
            continue
        number, dot, rest = key[size:].partition(".")
        if not dot or not number.isdigit():
            continue
        groups.setdefault(int(number), {})[rest] = span.get(key)
    return dict(sorted(groups.items()))


def int_of(span: Span, *keys: str) -> int | None:
    """The first of ``keys`` the span holds as an integer, else ``None``."""
    for key in keys:
        value = span.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


@dataclasses.dataclass(frozen=True)
class UsageKeys:
    """Where a flavour writes token usage (each fact: its keys, the first held wins)."""

    input: tuple[str, ...]
    output: tuple[str, ...]
    total: tuple[str, ...]
    cache_read: tuple[str, ...]
    cache_write: tuple[str, ...]


def usage_from(span: Span, keys: UsageKeys) -> Usage | None:
    """The request's token usage, when the span reports input or output tokens."""
    read, written = int_of(span, *keys.input), int_of(span, *keys.output)
    if read is None and written is None:
        return None
    return Usage(
        input_tokens=read or 0,
        output_tokens=written or 0,
        total_tokens=int_of(span, *keys.total) or (read or 0) + (written or 0),
        cache_read_tokens=int_of(span, *keys.cache_read) or 0,
        cache_write_tokens=int_of(span, *keys.cache_write) or 0,
    )
