"""A conversation's requests and calls as the harness ``Trace``, and what is missing.

A run the harness exported reads back exactly (``_harness``). Anything else goes through
the wire trace (``harness.cassettes.trace_from_requests``), the same reading a cassette
or the wire fake gets: the tools offered per request and their states, the calls of each
answer (or of the next request's history), their results from the next request's
history, and the tools injected or removed between two requests. What the spans add is
filled in: calls and results from tool spans where the content was not recorded. What
they lack stays unknown: a request whose tool definitions were not recorded offered
unknown tools (``offered`` is empty, ``tools`` is ``None``, and ``missing`` says so), and
no injection is inferred next to it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from harness.cassettes._trace import trace_from_requests
from harness.formats import ParsedRequest
from harness.formats.anthropic_messages import STOP_REASONS
from harness.loop import CallRecord, IterationRecord, ModelResponse, Trace, Usage
from harness.loop._usage import add_usage
from harness.traces._facts import RequestFacts, ToolFacts
from harness.traces._harness import is_run, missing_content, trace_of_run

if TYPE_CHECKING:
    from harness.traces._conversations import OtelConversation

__all__ = ["conversation_trace", "missing_facts", "response_of"]

_FINISH: dict[str, str] = {
    **STOP_REASONS,  # Anthropic's, as its format reads them
    "tool_call": "tool_calls",  # the GenAI conventions' and OpenAI's
    "tool_calls": "tool_calls",
    "stop": "stop",
    "length": "length",
    "content_filter": "content_filter",
}
"""Finish reasons as the instrumentations write them -> the harness's."""


def response_of(request: RequestFacts) -> ModelResponse | None:
    """The model's answer a request recorded (``None``: not recorded)."""
    if request.output is None:
        return None
    finish = _FINISH.get(request.finish_reason or "", "stop")
    if request.output.tool_calls:
        finish = "tool_calls"
    return ModelResponse(message=request.output, finish_reason=finish)  # type: ignore[arg-type]


def _parsed(request: RequestFacts) -> ParsedRequest:
    return ParsedRequest(
        model=request.model,
        messages=request.messages or (),
        tools=request.tools or (),
        stream=request.stream,
        tool_choice=request.tool_choice,
    )


def _tool_spans_by_request(conversation: OtelConversation) -> list[list[ToolFacts]]:
    """The tool spans that ran after each request and before the next one."""
    starts = [r.span.start for r in conversation.requests]
    out: list[list[ToolFacts]] = [[] for _ in starts]
    for call in conversation.tools:
        k = max((i for i, s in enumerate(starts) if s <= call.span.start), default=0)
        out[k].append(call)
    return out


def _record(call: ToolFacts) -> CallRecord:
    return CallRecord(
        id=call.call_id or call.span.span_id,
        name=call.name,
        arguments=call.arguments or "",
        content=call.result or "",
        is_error=call.is_error,
    )


def _fill(calls: tuple[CallRecord, ...], spans: list[ToolFacts]) -> tuple[CallRecord, ...]:
    """Results (and errors) of calls from the tool spans that ran them: by call id, else in
    order by name."""
    by_id = {s.call_id: s for s in spans if s.call_id}
    unmatched = [s for s in spans if not s.call_id or s.call_id not in {c.id for c in calls}]
    out = []
    for call in calls:
        span = by_id.get(call.id)
        if span is None:
            span = next((s for s in unmatched if s.name == call.name), None)
            if span is not None:
                unmatched.remove(span)
        if span is None:
            out.append(call)
            continue
        out.append(
            dataclasses.replace(
                call,
                content=call.content or span.result or "",
                arguments=call.arguments or span.arguments or "",
                is_error=call.is_error or span.is_error,
            )
        )
    return tuple(out)


def conversation_trace(conversation: OtelConversation) -> Trace:
    """The ``Trace`` of ``conversation`` (see the module docstring)."""
    root = conversation.root
    if root is not None and is_run(root):
        return trace_of_run(conversation.tree, root)
    requests = conversation.requests
    trace = trace_from_requests([_parsed(r) for r in requests], [response_of(r) for r in requests])
    spans = _tool_spans_by_request(conversation)
    iterations: list[IterationRecord] = []
    for k, (it, request) in enumerate(zip(trace.iterations, requests, strict=True)):
        calls = it.calls
        if not calls and request.output is None:
            calls = tuple(_record(s) for s in spans[k])
        else:
            calls = _fill(calls, spans[k])
        following = requests[k + 1] if k + 1 < len(requests) else None
        known = request.tools is not None and (following is None or following.tools is not None)
        iterations.append(
            dataclasses.replace(
                it,
                calls=calls,
                changes=it.changes if known else (),
                finish_reason=it.finish_reason or ("tool_calls" if calls else None),
                tools=it.tools if request.tools is not None else None,
                offered=it.offered if request.tools is not None else (),
            )
        )
    first = requests[0].tools if requests else None
    usage: dict[str, Usage] = {}
    for request in requests:
        if request.usage is not None:
            add_usage(usage, request.model, request.usage)
    return Trace(
        iterations=iterations,
        initial_tools=tuple(t.name for t in first) if first is not None else (),
        usage=usage,
    )


def missing_facts(conversation: OtelConversation) -> list[list[str]]:
    """Per request, which facts the spans do not hold."""
    root = conversation.root
    if root is not None and is_run(root):
        return [missing_content(root) for _ in conversation.requests]
    trace = conversation.trace()
    out = []
    for k, (it, request) in enumerate(zip(trace.iterations, conversation.requests, strict=True)):
        following = conversation.requests[k + 1] if k + 1 < len(conversation.requests) else None
        gaps = []
        if request.tools is None:
            gaps.append("tool definitions")
        if request.messages is None:
            gaps.append("input messages")
        if request.output is None and (following is None or following.messages is None):
            gaps.append("output (calls read from tool spans)" if it.calls else "output")
        if any(not c.arguments for c in it.calls):
            gaps.append("tool arguments")
        if any(not c.content for c in it.calls):
            gaps.append("tool results")
        gaps.extend(sorted(request.redacted - set(gaps)))
        out.append(gaps)
    return out
