"""A harness run as OpenTelemetry spans (the GenAI conventions plus ``harness.*``).

One ``invoke_agent`` span per run (a session, a scenario's session or a fuzz
counterexample is a run with turns), one ``chat`` span per model request and one
``execute_tool`` span per tool call, the request's and the call's facts as the GenAI
conventions name them, and the rest of the harness ``Trace`` as ``harness.*`` attributes
(``harness.traces._attributes``): what each request offered, what a strategy injected or
removed and why (on the request that first offers the tool: ``harness.injected``,
``harness.changed_by``), tool states, cache breaks when a cost report is given, the
loop's events as span events. A nested run (an agentic tool's) is a nested
``invoke_agent`` span under the call that made it. ``trace_from_otel`` reads it back as
the same ``Trace``.

Content (the messages sent, the answer, call arguments and results, what tools said to
the user) is recorded unless ``content=False``, as the conventions' opt-in attributes;
every string is scrubbed of known secrets first (``harness._secrets``).

The spans are made after the run, from its trace: their times keep the order of what
happened, one millisecond apart, not how long each step took.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from harness._extras import require
from harness._secrets import scrub_text
from harness.loop import CallRecord, Event, IterationRecord, Trace, Usage
from harness.messages import AssistantMessage, Message, ToolCall
from harness.traces import _attributes as A
from harness.traces._genai import message_data, output_data

__all__ = ["ExportOptions", "emit", "requests_of_history", "sources_of"]

_TICK = 1_000_000
"""One step of the synthetic clock (1 ms)."""

_CONTENT_FIELDS = frozenset({"arguments", "message", "content", "output", "user_content"})
"""Event fields that quote content, left out when content is not recorded."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExportOptions:
    """How a run is exported."""

    content: bool = True
    """Record messages, the answer, call arguments and results."""
    name: str = "harness"
    """The agent name (``gen_ai.agent.name``)."""
    model: str | None = None
    """The model name on each request (default: the trace's only model, if it has one)."""
    provider: str | None = None
    """``gen_ai.provider.name`` (default: ``harness``, the fake or scripted model)."""
    kind: str = "run"
    """What is exported: ``run``, ``session``, ``scenario`` or ``counterexample``."""
    attributes: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """More attributes for the run's span (a test's node id, a scenario's path)."""
    cost: Any = None
    """A ``harness.cost.CostReport`` of the run: its cache breaks go on the requests."""


def sources_of(source: Any) -> tuple[Trace, Sequence[Message] | None]:
    """The trace and, when known, the history of a ``Trace``, ``RunResult`` or ``Session``."""
    if isinstance(source, Trace):
        return source, None
    trace = getattr(source, "trace", None)
    if isinstance(trace, Trace):
        messages = getattr(source, "messages", None)
        return trace, list(messages) if messages is not None else None
    raise TypeError(
        "export a harness Trace, a RunResult or a Session (anything with .trace); got "
        f"{type(source).__name__}"
    )


def requests_of_history(trace: Trace, messages: Sequence[Message] | None) -> list[list[Message]]:
    """The history each request sent, cut from the final history at each answer (empty when
    it cannot be told: no history, a restarted run, answers that do not match requests)."""
    if messages is None or trace.restarts:
        return []
    cuts = [k for k, m in enumerate(messages) if isinstance(m, AssistantMessage)]
    if len(cuts) < len(trace.iterations) - 1 or len(cuts) > len(trace.iterations):
        return []
    ends = [*cuts[: len(trace.iterations)], len(messages)][: len(trace.iterations)]
    return [list(messages[:end]) for end in ends]


class _Clock:
    def __init__(self, start: int) -> None:
        self.now = start

    def tick(self) -> int:
        self.now += _TICK
        return self.now


def _scrubbed(value: Any) -> Any:
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, (list, tuple)):
        return [_scrubbed(v) for v in value]
    return value


def _json(value: Any) -> str:
    return scrub_text(json.dumps(value, ensure_ascii=False, default=repr))


def _set(attributes: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` when ``value`` is worth recording (OpenTelemetry has no null)."""
    if value is not None:
        attributes[key] = _scrubbed(value)


class _Emitter:
    """Emits one run (and its nested runs) through a tracer."""

    def __init__(self, api: Any, tracer: Any, options: ExportOptions, clock: _Clock) -> None:
        self.api = api
        self.tracer = tracer
        self.options = options
        self.clock = clock

    def run(
        self,
        trace: Trace,
        messages: Sequence[Message] | None,
        context: Any,
        *,
        child_index: int | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> Any:
        options = self.options
        model = options.model or (next(iter(trace.usage)) if len(trace.usage) == 1 else None)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": options.name,
            "gen_ai.provider.name": options.provider or "harness",
            A.RUN: options.kind if child_index is None else "run",
            A.CONTENT: options.content,
            A.INITIAL_TOOLS: list(trace.initial_tools),
            A.RESTARTS: trace.restarts,
            A.ITERATIONS: len(trace.iterations),
        }
        _set(attributes, "gen_ai.request.model", model)
        _set(attributes, A.CHILD_INDEX, child_index)
        self._usage(attributes, trace)
        if trace.completions:
            records = [c.to_dict() for c in trace.completions]
            if not options.content:
                records = [{**r, "content": None, "user_content": None} for r in records]
            attributes[A.COMPLETIONS] = _json(records)
        for key, value in {
            **(options.attributes if child_index is None else {}),
            **(extra or {}),
        }.items():
            _set(attributes, key, value)
        name = f"invoke_agent {options.name}"
        root = self.tracer.start_span(
            name, context=context, attributes=attributes, start_time=self.clock.tick()
        )
        inner = self.api.set_span_in_context(root)
        events = self._events_by_iteration(trace)
        self._add_events(root, events.pop(0, []))
        histories = requests_of_history(trace, messages) if options.content else []
        attached: set[int] = set()
        for k, it in enumerate(trace.iterations):
            previous = trace.iterations[k - 1] if k else None
            history = histories[k] if k < len(histories) else None
            self._request(it, previous, inner, model, history, events.pop(it.index, []))
            for index, call in enumerate(it.calls):
                self._call(trace, it, index, call, inner, attached)
        for index, child in enumerate(trace.children):
            if index not in attached:
                self.run(child, None, inner, child_index=index)
        for leftover in events.values():  # events of iterations without a request span
            self._add_events(root, leftover)
        root.end(end_time=self.clock.tick())
        return root

    def _usage(self, attributes: dict[str, Any], trace: Trace) -> None:
        if not trace.usage:
            return
        attributes[A.USAGE] = _json({m: dataclasses.asdict(u) for m, u in trace.usage.items()})
        total = sum(trace.usage.values(), start=Usage())
        attributes["gen_ai.usage.input_tokens"] = total.input_tokens
        attributes["gen_ai.usage.output_tokens"] = total.output_tokens
        attributes["gen_ai.usage.cache_read.input_tokens"] = total.cache_read_tokens
        attributes["gen_ai.usage.cache_creation.input_tokens"] = total.cache_write_tokens

    def _events_by_iteration(self, trace: Trace) -> dict[int, list[tuple[int, Event]]]:
        known = {it.index for it in trace.iterations}
        out: dict[int, list[tuple[int, Event]]] = {}
        for seq, event in enumerate(trace.events):
            key = event.iteration if event.iteration in known else 0
            out.setdefault(key, []).append((seq, event))
        return out

    def _add_events(self, span: Any, events: list[tuple[int, Event]]) -> None:
        for seq, event in events:
            data = event.to_dict()
            data.pop("kind", None)
            if not self.options.content:
                data = {k: v for k, v in data.items() if k not in _CONTENT_FIELDS}
            stamp = data.get("timestamp")
            when = int(stamp * 1e9) if isinstance(stamp, float) else self.clock.now
            span.add_event(event.kind, {A.EVENT: _json(data), A.SEQ: seq}, timestamp=when)

    def _request(
        self,
        it: IterationRecord,
        previous: IterationRecord | None,
        context: Any,
        model: str | None,
        history: list[Message] | None,
        events: list[tuple[int, Event]],
    ) -> None:
        options = self.options
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": options.provider or "harness",
            "gen_ai.tool.definitions": _json(_definitions(it)),
            A.ITERATION: it.index,
            A.TURN: it.turn,
            A.OFFERED: list(it.offered),
            A.CHANGES: _json([c.to_dict() for c in it.changes]),
            A.DISCOVERED: list(it.discovered),
            A.SEARCHES: it.searches,
            A.CONTINUED: it.continued,
        }
        _set(attributes, "gen_ai.request.model", model)
        _set(attributes, A.FINISH_REASON, it.finish_reason)
        if it.finish_reason is not None:
            attributes["gen_ai.response.finish_reasons"] = [it.finish_reason]
        if it.tool_choice is not None:
            attributes[A.TOOL_CHOICE] = _json(it.tool_choice.to_data())
        if it.tools is not None:
            states = it.tools.to_data()
            choice = it.tools.tool_choice
            states["tool_choice"] = choice.to_data() if choice is not None else None
            attributes[A.TOOLS] = _json(states)
        self._visible_changes(attributes, it, previous)
        self._cache_break(attributes, it)
        if options.content:
            answer = AssistantMessage(
                content=it.answer,
                tool_calls=tuple(
                    ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in it.calls
                ),
            )
            attributes["gen_ai.output.messages"] = _json(output_data(answer, it.finish_reason))
            if history is not None:
                attributes["gen_ai.input.messages"] = _json([message_data(m) for m in history])
        name = f"chat {model}" if model else "chat"
        kind = self.api.SpanKind.CLIENT
        span = self.tracer.start_span(
            name, context=context, kind=kind, attributes=attributes, start_time=self.clock.tick()
        )
        self._add_events(span, events)
        if it.finish_reason is None and not it.calls and it.answer is None:
            span.set_status(self.api.Status(self.api.StatusCode.ERROR, "no answer was recorded"))
        span.end(end_time=self.clock.tick())

    def _visible_changes(
        self, attributes: dict[str, Any], it: IterationRecord, previous: IterationRecord | None
    ) -> None:
        """What this request is the first to offer (or no longer offers), and who did it:
        the changes of the previous iteration (or, on the first request, the set-up)."""
        if previous is None:
            if it.set_up:
                attributes[A.SET_UP] = list(it.set_up)
            return
        changes = [c for c in previous.changes if not c.initial]
        injected = [n for n in previous.injected if n in it.offered or n in it.deferred]
        removed = [n for n in previous.removed if n not in it.offered]
        if injected:
            attributes[A.INJECTED] = injected
        if removed:
            attributes[A.REMOVED] = removed
        if injected or removed:
            attributes[A.CHANGED_BY] = list(dict.fromkeys(c.strategy for c in changes))

    def _cache_break(self, attributes: dict[str, Any], it: IterationRecord) -> None:
        report = self.options.cost
        for request in getattr(report, "requests", ()):
            if request.run == 1 and request.iteration == it.index and request.cache_break:
                found = request.cache_break
                attributes[A.CACHE_BREAK_CAUSE] = found.cause
                _set(attributes, A.CACHE_BREAK_BY, found.by)
                attributes[A.CACHE_BREAK_LOST] = found.lost_tokens

    def _call(
        self,
        trace: Trace,
        it: IterationRecord,
        index: int,
        call: CallRecord,
        context: Any,
        attached: set[int],
    ) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
            A.ITERATION: it.index,
            A.CALL_INDEX: index,
            A.ATTEMPTS: call.attempts,
            A.IS_ERROR: call.is_error,
            A.SILENT: call.silent,
            A.IS_ASYNC: call.is_async,
        }
        _set(attributes, A.ERROR_KIND, call.error_kind)
        if call.is_error:
            attributes["error.type"] = call.error_kind or "tool_error"
        if self.options.content:
            attributes["gen_ai.tool.call.arguments"] = scrub_text(call.arguments)
            attributes["gen_ai.tool.call.result"] = scrub_text(call.content)
            _set(attributes, A.USER_CONTENT, call.user_content)
        span = self.tracer.start_span(
            f"execute_tool {call.name}",
            context=context,
            attributes=attributes,
            start_time=self.clock.tick(),
        )
        if call.is_error:
            span.set_status(self.api.Status(self.api.StatusCode.ERROR, call.error_kind or ""))
        inner = self.api.set_span_in_context(span)
        for child in call.children:
            position = _position(trace.children, child)
            if position is not None:
                attached.add(position)
            self.run(child, None, inner, child_index=position)
        span.end(end_time=self.clock.tick())


def _position(children: Sequence[Trace], child: Any) -> int | None:
    return next((k for k, c in enumerate(children) if c is child), None)


def _definitions(it: IterationRecord) -> list[dict[str, Any]]:
    """``gen_ai.tool.definitions`` of a request: the tools it offered (the trace keeps names;
    deferred ones marked as the API marks them)."""
    out: list[dict[str, Any]] = [{"type": "function", "name": n} for n in it.offered]
    out.extend({"type": "function", "name": n, "defer_loading": True} for n in it.deferred)
    return out


def emit(
    items: Sequence[tuple[Any, ExportOptions]],
    tracer_provider: Any = None,
    start: int | None = None,
) -> list[Any]:
    """Emit each ``(source, options)`` as one trace through ``tracer_provider`` (the global
    one when ``None``); the root span of each run, in order."""
    require("opentelemetry", "exporting runs as OpenTelemetry spans", extra="otel")
    from opentelemetry import context as context_api, trace as trace_api

    from harness._version import __version__

    provider = tracer_provider if tracer_provider is not None else trace_api.get_tracer_provider()
    tracer = provider.get_tracer("harness", __version__)
    clock = _Clock(start if start is not None else time.time_ns())
    roots = []
    for source, options in items:
        trace, messages = sources_of(source)
        emitter = _Emitter(trace_api, tracer, options, clock)
        roots.append(emitter.run(trace, messages, context_api.Context()))
    return roots
