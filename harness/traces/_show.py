"""A trace file as text and as the data of ``harness cassette show --json``.

``otel_show_data`` prints exactly the shape a cassette gives (the request entries are
built by the same function, ``harness.cassettes._show.request_data``), so a tool that
reads one reads the other. What a trace adds: per conversation its ``trace_id``, ``name``
and ``parent`` (the conversation whose tool call ran it, by index); per request its
``span`` and ``missing`` (the facts the spans do not hold: ``tool definitions`` make
``"tools": null``, unknown rather than empty).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.cassettes._show import printable, request_data
from harness.loop import IterationRecord
from harness.traces._conversations import OtelConversation, otel_conversations
from harness.traces._facts import RequestFacts

__all__ = ["otel_show_data", "show_otel"]

FORMAT = "otlp-json"
"""The ``format`` of a trace file in the ``--json`` shape."""


def _label(source: Any) -> str:
    return str(source) if isinstance(source, (str, Path)) else "<spans>"


def _short(text: str, limit: int = 100) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _choice(it: IterationRecord, request: RequestFacts) -> Any:
    if it.tools is not None and it.tools.tool_choice is not None:
        return it.tools.tool_choice
    return it.tool_choice or request.tool_choice


def otel_show_data(source: Any) -> dict[str, Any]:
    """The conversations of a trace source in the ``harness cassette show --json`` shape
    (``docs/cassettes.md``), with the additions the module docstring names."""
    found = otel_conversations(source)
    out = []
    number = 0
    for conversation in found:
        requests = []
        trace = conversation.trace()
        missing = conversation.missing()
        for it, request, gaps in zip(trace, conversation.requests, missing, strict=True):
            number += 1
            entry = request_data(
                it,
                interaction=number,
                provider=request.provider or "",
                model=request.model or "",
                stream=request.stream,
                status=500 if request.error else 200,
                tool_choice=_choice(it, request),
                error=request.error,
                tools_known=request.tools is not None,
            )
            entry["span"] = request.span.span_id
            entry["missing"] = gaps
            requests.append(entry)
        out.append(
            {
                "requests": requests,
                "trace_id": conversation.trace_id,
                "name": conversation.name,
                "parent": found.index(conversation.parent) if conversation.parent else None,
            }
        )
    return {"cassette": _label(source), "format": FORMAT, "conversations": out}


def _request_lines(it: IterationRecord, request: RequestFacts, gaps: list[str]) -> list[str]:
    where = f"span {request.span.span_id}, model {request.model or '?'}"
    if request.tools is None:
        offered = "offered tools unknown (not recorded)"
    else:
        offered = f"offered {len(it.offered)}" + (
            f": {', '.join(it.offered)}" if it.offered else ""
        )
    lines = [f"request {it.index} ({where}): {offered}"]
    if request.error:
        lines.append(f"  error: {request.error}")
    for call in it.calls:
        lines.append(f"  call {call.name}({_short(call.arguments, 80)}) id={call.id}")
        if call.content:
            lines.append(f"    -> {_short(call.content)}")
    if it.answer is not None:
        lines.append(f"  answer: {_short(it.answer, 160)}")
    if it.injected:
        lines.append(f"  injected: {', '.join(it.injected)}")
    if it.removed:
        lines.append(f"  removed: {', '.join(it.removed)}")
    if gaps:
        lines.append(f"  missing: {', '.join(gaps)}")
    return lines


def _conversation_lines(number: int, conversation: OtelConversation, many: bool) -> list[str]:
    lines = []
    if many:
        nested = " (nested in another's tool call)" if conversation.parent else ""
        lines.append(
            f"conversation {number} ({conversation.name}; trace {conversation.trace_id}; "
            f"{', '.join(conversation.flavours)}){nested}"
        )
    trace = conversation.trace()
    for it, request, gaps in zip(trace, conversation.requests, conversation.missing(), strict=True):
        lines.extend(_request_lines(it, request, gaps))
    return lines


def show_otel(source: Any) -> list[str]:
    """A trace source as an injection timeline, one line per fact (``printable``: escapes in
    recorded text are shown, not obeyed)."""
    found = otel_conversations(source)
    spans = len(found[0].tree.spans) if found else 0
    requests = sum(len(c.requests) for c in found)
    lines = [
        f"trace file {_label(source)}: {spans} span(s), {len(found)} conversation(s), "
        f"{requests} model request(s)"
    ]
    for number, conversation in enumerate(found, 1):
        lines.extend(_conversation_lines(number, conversation, len(found) > 1))
    return [printable(line) for line in lines]
