"""How a source's spans group into conversations, each with its model requests and calls.

A conversation is what one agent run did: the model requests under the nearest agent
span (``invoke_agent``, OpenInference's ``AGENT``, a harness run), or, without one, the
requests of one trace. Several traces in a file are several conversations; a run nested
in another's tool call is a conversation of its own, linked to that call (``parent``).

Instrumentations stack: pydantic-ai's span wraps the OpenAI SDK instrumentation's span
of the same request, two SDK instrumentations wrap each other. A request span inside
another request span is the same request (its facts fill what the outer one left
unknown), and so are two requests of one conversation with the same response id: each
model request counts once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from harness.loop import Trace
from harness.traces._facts import RequestFacts, ToolFacts, merge_facts
from harness.traces._flavours import request_facts, role_of, tool_facts
from harness.traces._spans import Span, read_spans
from harness.traces._tree import SpanTree

__all__ = ["OtelConversation", "otel_conversations"]

Key = tuple[str, str]


def _key(span: Span) -> Key:
    return (span.trace_id, span.span_id)


@dataclasses.dataclass(eq=False, kw_only=True)
class OtelConversation:
    """One conversation found in OpenTelemetry spans: its model requests and tool calls."""

    trace_id: str
    """The OpenTelemetry trace it belongs to."""
    root: Span | None
    """Its agent span (``None``: the requests of a trace without one)."""
    requests: list[RequestFacts]
    """Its model requests, in order (each once, stacked instrumentations merged)."""
    tools: list[ToolFacts]
    """Its tool calls, in order."""
    parent: OtelConversation | None = None
    """The conversation whose tool call ran this one (a nested agent), if any."""
    parent_call: str | None = None
    """The id of that call, when known."""
    tree: SpanTree = dataclasses.field(repr=False)
    _trace: Trace | None = dataclasses.field(default=None, repr=False)

    @property
    def name(self) -> str:
        """The agent span's name, else the trace id."""
        return self.root.name if self.root is not None else f"trace {self.trace_id}"

    @property
    def flavours(self) -> tuple[str, ...]:
        """The attribute flavours its requests were written in."""
        return tuple(dict.fromkeys(r.flavour for r in self.requests))

    def trace(self) -> Trace:
        """The conversation as a harness ``Trace`` (see ``harness.traces._assemble``; built
        on the first call, the same object after: a ``Trace`` grows, so copy it to edit)."""
        from harness.traces._assemble import conversation_trace

        if self._trace is None:  # built once: show reads it for the timeline and for gaps
            self._trace = conversation_trace(self)
        return self._trace

    def missing(self) -> list[list[str]]:
        """Per request, the facts the spans do not hold (``[]``: nothing missing)."""
        from harness.traces._assemble import missing_facts

        return missing_facts(self)


def _outermost(tree: SpanTree, requests: dict[Key, Span]) -> dict[Key, Key]:
    """Each request span -> the outermost request span around it (itself when none)."""
    nearest = tree.nearest_all(lambda s: _key(s) in requests)
    out: dict[Key, Key] = {}
    for key in requests:
        path = [key]
        current = nearest.get(key)
        while current is not None:
            parent = _key(current)
            if parent in out:
                path.append(out[parent])
                break
            path.append(parent)
            current = nearest.get(parent)
        top = path[-1]
        for item in path:
            out[item] = top
    return out


def _same(one: RequestFacts, other: RequestFacts) -> bool:
    """Two request spans of one conversation recorded the same model request: the same
    response id, or overlapping in time with the same history and answer (instrumentations
    stacked under a parent span that was not exported are siblings, not nested)."""
    if one.response_id and other.response_id:
        return one.response_id == other.response_id
    overlap = one.span.start <= other.span.end and other.span.start <= one.span.end
    return (
        overlap
        and one.messages is not None
        and one.messages == other.messages
        and one.output == other.output
    )


def _dedupe(requests: list[RequestFacts]) -> list[RequestFacts]:
    """Each model request once (see ``_same``), its facts merged from every span of it."""
    out: list[RequestFacts] = []
    for request in requests:
        recent = out[-4:]  # a request's duplicates start next to it
        match = next((k for k, kept in enumerate(recent) if _same(kept, request)), None)
        if match is None:
            out.append(request)
        else:
            index = len(out) - len(recent) + match
            out[index] = merge_facts(out[index], request)
    return out


def _order(span: Span) -> tuple[int, int]:
    return (span.start, span.order)


def conversations_of_spans(spans: Sequence[Span]) -> list[OtelConversation]:
    """The conversations of ``spans`` (see the module docstring), in the order each starts."""
    tree = SpanTree(spans)
    roles = {_key(s): role for s in tree.spans if (role := role_of(s)) is not None}
    by_key = {_key(s): s for s in tree.spans}
    requests = {k: by_key[k] for k, role in roles.items() if role == "request"}
    agents = tree.nearest_all(lambda s: roles.get(_key(s)) == "agent")
    tops = _outermost(tree, requests)
    stacks: dict[Key, list[Key]] = {}
    for key in sorted(requests, key=lambda k: _order(by_key[k])):
        stacks.setdefault(tops[key], []).append(key)
    facts: dict[Key, RequestFacts] = {}
    for top, members in stacks.items():
        fact = request_facts(by_key[top])
        for key in members:
            if key != top:  # an instrumentation stacked inside: the same request
                fact = merge_facts(fact, request_facts(by_key[key]))
        facts[top] = fact
    groups: dict[Key, tuple[list[RequestFacts], list[ToolFacts]]] = {}

    def group_of(span: Span) -> Key:
        agent = agents.get(_key(span))
        return _key(agent) if agent is not None else (span.trace_id, "")

    for top, fact in facts.items():
        groups.setdefault(group_of(by_key[top]), ([], []))[0].append(fact)
    for key, role in roles.items():
        if role == "tool":
            span = by_key[key]
            groups.setdefault(group_of(span), ([], []))[1].append(tool_facts(span))
    found: dict[Key, OtelConversation] = {}
    for group, (reqs, calls) in groups.items():
        if not reqs:
            continue
        reqs.sort(key=lambda r: _order(r.span))
        calls.sort(key=lambda c: _order(c.span))
        found[group] = OtelConversation(
            trace_id=group[0],
            root=by_key.get(group) if group[1] else None,
            requests=_dedupe(reqs),
            tools=calls,
            tree=tree,
        )
    _link(found, tree, agents, roles, by_key)
    return sorted(found.values(), key=lambda c: _order(c.requests[0].span))


def _link(
    found: dict[Key, OtelConversation],
    tree: SpanTree,
    agents: dict[Key, Span | None],
    roles: Mapping[Key, str],
    by_key: dict[Key, Span],
) -> None:
    """Link each nested conversation to the one whose tool call ran it."""
    tools = tree.nearest_all(lambda s: roles.get(_key(s)) == "tool")
    for key, conversation in found.items():
        if conversation.root is None:
            continue
        outer = agents.get(key)
        while outer is not None and _key(outer) not in found:
            outer = agents.get(_key(outer))
        if outer is None:
            continue
        conversation.parent = found[_key(outer)]
        call = tools.get(key)
        if call is not None:
            conversation.parent_call = tool_facts(call).call_id


def otel_conversations(source: Any) -> list[OtelConversation]:
    """The conversations of an OpenTelemetry source: an OTLP JSON file (one document or
    JSON Lines), its decoded documents, or SDK spans. ``TraceFileError`` when it cannot be
    read (naming the file and the span at fault)."""
    return conversations_of_spans(read_spans(source))
