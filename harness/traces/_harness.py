"""A run the harness exported (``_export``), read back as the same ``Trace``.

The ``invoke_agent`` span marked ``harness.run`` is the run; its ``chat`` spans (with
``harness.iteration``) are the requests, its ``execute_tool`` spans the calls, the span
events the loop's events, nested ``invoke_agent`` spans its nested runs. The facts the
GenAI conventions name (the answer, arguments, results) are read from their attributes;
the rest from ``harness.*``. Content left out at export (``content=False``) reads back
empty and is named by ``missing_content``.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Callable, Mapping
from typing import Any

from harness.loop import (
    CallRecord,
    ChangeRecord,
    CompletionRecord,
    Event,
    IterationRecord,
    Trace,
    Usage,
)
from harness.loop._tool_states import ToolStates
from harness.tools import ToolChoice
from harness.traces import _attributes as A
from harness.traces._facts import assistant_of
from harness.traces._genai import _messages
from harness.traces._spans import Span
from harness.traces._tree import SpanTree

__all__ = ["is_run", "missing_content", "trace_of_run"]


def is_run(span: Span) -> bool:
    """The root span of a run the harness exported."""
    return span.get(A.RUN) is not None


def missing_content(root: Span) -> list[str]:
    """What the export left out of this run (content not recorded)."""
    if root.get(A.CONTENT) is False:
        return ["answers", "tool arguments", "tool results", "input messages"]
    return []


def _int(span: Span, key: str, default: int = 0) -> int:
    value = span.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise span.error(f"attribute {key!r} should be an integer, got {value!r:.40}")
    return value


def _names(span: Span, key: str) -> tuple[str, ...]:
    value = span.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise span.error(f"attribute {key!r} should be a list of names, got {value!r:.80}")
    return tuple(value)


def _records(span: Span, key: str, build: Callable[[dict[str, Any]], Any]) -> list[Any]:
    value = span.json(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise span.error(f"attribute {key!r} should be a JSON list of objects")
    try:
        return [build(v) for v in value]
    except (TypeError, ValueError, KeyError) as exc:
        raise span.error(f"attribute {key!r} does not describe harness records: {exc}") from None


def _change(data: dict[str, Any]) -> ChangeRecord:
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    return ChangeRecord(**fields)  # names as tuples


def _states(span: Span) -> ToolStates | None:
    data = span.json(A.TOOLS)
    if data is None:
        return None
    if not isinstance(data, dict):
        raise span.error(f"attribute {A.TOOLS!r} should be a JSON object")
    choice = data.get("tool_choice")
    namespaces = data.get("namespaces") or {}
    return ToolStates(
        visible=tuple(data.get("visible", ())),
        deferred=tuple(data.get("deferred", ())),
        search=tuple(data.get("search", ())),
        namespaces={k: tuple(v) for k, v in namespaces.items()},
        tool_choice=ToolChoice.from_data(choice) if isinstance(choice, dict) else None,
    )


def _call(span: Span, children: list[Any]) -> CallRecord:
    user = span.get(A.USER_CONTENT)
    return CallRecord(
        id=span.text("gen_ai.tool.call.id") or "",
        name=span.text("gen_ai.tool.name") or "",
        arguments=span.text("gen_ai.tool.call.arguments") or "",
        content=span.text("gen_ai.tool.call.result") or "",
        is_error=span.get(A.IS_ERROR) is True,
        error_kind=span.text(A.ERROR_KIND),
        attempts=_int(span, A.ATTEMPTS, 1),
        user_content=user if isinstance(user, str) else None,
        silent=span.get(A.SILENT) is True,
        children=tuple(children),
        is_async=span.get(A.IS_ASYNC) is True,
    )


def _iteration(span: Span, calls: list[CallRecord]) -> IterationRecord:
    outputs = _messages(span, "gen_ai.output.messages")
    answer = assistant_of(outputs) if outputs else None
    choice = span.json(A.TOOL_CHOICE)
    return IterationRecord(
        index=_int(span, A.ITERATION),
        offered=_names(span, A.OFFERED),
        calls=tuple(calls),
        changes=tuple(_records(span, A.CHANGES, _change)),
        answer=answer.content if answer is not None else None,
        finish_reason=span.text(A.FINISH_REASON),
        turn=_int(span, A.TURN, 1),
        tool_choice=ToolChoice.from_data(choice) if isinstance(choice, dict) else None,
        continued=span.get(A.CONTINUED) is True,
        tools=_states(span),
        discovered=_names(span, A.DISCOVERED),
        searches=_int(span, A.SEARCHES),
    )


@functools.cache
def _event_classes() -> dict[str, type[Event]]:
    import harness.injection  # noqa: F401  (its modules define most event kinds)

    found: dict[str, type[Event]] = {}
    pending = [Event]
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            # dataclass(slots=True) replaces a class: the module's attribute is the live one
            module = sys.modules.get(sub.__module__)
            if getattr(module, sub.__qualname__, None) is sub:
                found.setdefault(sub.__name__, sub)
            pending.append(sub)
    return found


def _events(spans: list[Span], skipped: list[str]) -> list[Event]:
    classes = _event_classes()
    ordered: list[tuple[int, Event]] = []
    for span in spans:
        for item in span.events:
            data = item.attributes.get(A.EVENT)
            seq = item.attributes.get(A.SEQ)
            if not isinstance(data, str) or not isinstance(seq, int):
                continue
            fields = span.parse_json(data, what=f"event {item.name!r}")
            cls = classes.get(item.name)
            if cls is None or not isinstance(fields, dict):
                skipped.append(item.name)
                continue
            known = {f.name for f in dataclasses.fields(cls)}
            given: dict[str, Any] = {
                k: tuple(v) if isinstance(v, list) else v for k, v in fields.items() if k in known
            }
            try:
                event = cls(**given)
            except TypeError:  # exported without its content fields
                skipped.append(item.name)
                continue
            ordered.append((seq, event))
    return [e for _, e in sorted(ordered, key=lambda pair: pair[0])]


def _usage(span: Span) -> dict[str, Usage]:
    data = span.json(A.USAGE)
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise span.error(f"attribute {A.USAGE!r} should be a JSON object")
    try:
        return {str(k): Usage(**v) for k, v in data.items()}
    except TypeError as exc:
        raise span.error(f"attribute {A.USAGE!r} is not token usage: {exc}") from None


def trace_of_run(tree: SpanTree, root: Span, skipped: list[str] | None = None) -> Trace:
    """The ``Trace`` of the run whose ``invoke_agent`` span is ``root``."""
    skipped = skipped if skipped is not None else []
    kids = tree.kids(root)
    chats = sorted(
        (k for k in kids if k.get(A.ITERATION) is not None and k.get(A.CALL_INDEX) is None),
        key=lambda s: _int(s, A.ITERATION),
    )
    calls: dict[int, list[tuple[int, CallRecord]]] = {}
    nested: list[tuple[int, Trace]] = []
    for span in kids:
        if span.get(A.CALL_INDEX) is not None:
            children = []
            for child in tree.kids(span):
                if is_run(child):
                    traced = trace_of_run(tree, child, skipped)
                    children.append(traced)
                    nested.append((_int(child, A.CHILD_INDEX), traced))
            record = _call(span, children)
            calls.setdefault(_int(span, A.ITERATION), []).append((_int(span, A.CALL_INDEX), record))
        elif is_run(span):
            nested.append((_int(span, A.CHILD_INDEX), trace_of_run(tree, span, skipped)))
    iterations = [
        _iteration(c, [r for _, r in sorted(calls.get(_int(c, A.ITERATION), []), key=_first)])
        for c in chats
    ]
    return Trace(
        iterations=iterations,
        events=_events([root, *chats], skipped),
        initial_tools=_names(root, A.INITIAL_TOOLS),
        restarts=_int(root, A.RESTARTS),
        children=[t for _, t in sorted(nested, key=_first)],
        usage=_usage(root),
        completions=_records(root, A.COMPLETIONS, lambda d: CompletionRecord(**d)),
    )


def _first(pair: tuple[int, Any]) -> int:
    return pair[0]
