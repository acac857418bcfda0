"""OTLP JSON text decoded by msgspec into structs that declare only the fields the readers
use: the fast way a trace file's spans are read.

msgspec skips the fields no struct declares without building them, and its structs are not
tracked by the cyclic garbage collector (a file of a hundred thousand spans would otherwise
make every collection walk millions of objects). Attribute values stay plain JSON values,
decoded by ``_spans`` when a reader asks for them, exactly as the stdlib reader leaves them.

The structs accept only the well-formed shape. Anything else (a wrong type, an id that is
not hex, JSON msgspec refuses) makes ``spans_of_text`` return ``None`` and the caller reads
the text again with the stdlib reader, whose errors name the span at fault: both readers
give the same spans for every file the structs accept, and only that reader's errors.
"""

from __future__ import annotations

from typing import Any

import msgspec

from harness._frozen import maker
from harness.traces import _spans
from harness.traces._spans import (
    _STATUS,
    Span,
    SpanEvent,
    _any_value,
    _Attributes,
    _Bad,
    _id,
    _time,
)

__all__ = ["spans_of_text"]


class _KeyValue(msgspec.Struct, gc=False):
    key: str
    value: dict[str, Any] | None = None


class _Event(msgspec.Struct, gc=False):
    name: str = ""
    timeUnixNano: int | str | None = None
    attributes: list[_KeyValue] | None = None


class _Status(msgspec.Struct, gc=False):
    code: int | str = 0


class _Span(msgspec.Struct, gc=False):
    traceId: str = ""
    spanId: str = ""
    parentSpanId: str | None = None
    name: str = ""
    startTimeUnixNano: int | str | None = None
    endTimeUnixNano: int | str | None = None
    attributes: list[_KeyValue] | None = None
    events: list[_Event] | None = None
    status: _Status | None = None


class _Scoped(msgspec.Struct, gc=False):
    scope: Any = None
    instrumentationLibrary: Any = None
    spans: list[_Span] = []


class _Resource(msgspec.Struct, gc=False):
    scopeSpans: list[_Scoped] = []
    instrumentationLibrarySpans: list[_Scoped] = []


class _Document(msgspec.Struct, gc=False):
    resourceSpans: list[_Resource] = []


_DECODER = msgspec.json.Decoder(_Document)
_new_span = maker(Span)  # the same instances, built without keyword packing (harness/_frozen)
_new_event = maker(SpanEvent)


def _attributes(items: list[_KeyValue] | None) -> _Attributes:
    """The attributes, every value that decodes without error to something other than a
    dict decoded now (see ``_Attributes``)."""
    raw: dict[str, Any] = {}
    limit = _spans.MAX_ATTRIBUTE_CHARS  # looked up on each read, as the stdlib reader does
    for item in items or ():
        value: Any = item.value
        if value is not None:
            text = value.get("stringValue")  # the first kind the stdlib reader looks for
            if type(text) is str and len(text) <= limit:
                value = text
            else:
                try:
                    decoded = _any_value(value, 1)
                except _Bad:  # refused when read, as the stdlib reader refuses it
                    decoded = value
                if type(decoded) is not dict:  # a decoded kvlist would read as raw
                    value = decoded
        raw[item.key] = value
    return _Attributes(raw)


def _event(data: _Event) -> SpanEvent:
    return _new_event(
        name=data.name,
        time=_time(data.timeUnixNano, "event timeUnixNano"),
        attributes=_attributes(data.attributes),
    )


def _status(data: _Status | None) -> str:
    if data is None:
        return "unset"
    name = _STATUS.get(data.code)
    if name is None:
        raise _Bad(f"status.code should be 0, 1 or 2, got {data.code!r:.40}")
    return name


class _Ids:
    """Ids as lower-case hex, each text checked once (a trace id is on every span of its
    trace, a parent id is another span's id)."""

    __slots__ = ("spans", "traces")

    def __init__(self) -> None:
        self.traces: dict[str, str] = {}
        self.spans: dict[str, str] = {}

    def trace(self, value: str) -> str:
        known = self.traces.get(value)
        if known is None:
            known = self.traces[value] = _id(value, 16, "traceId")
        return known

    def span(self, value: str, field: str) -> str:
        known = self.spans.get(value)
        if known is None:
            known = self.spans[value] = _id(value, 8, field)
        return known


def _span(data: _Span, scope: str, order: int, source: str, ids: _Ids) -> Span:
    parent = data.parentSpanId
    return _new_span(
        trace_id=ids.trace(data.traceId),
        span_id=ids.span(data.spanId, "spanId"),
        parent_id=ids.span(parent, "parentSpanId") if parent else None,
        name=data.name,
        start=_time(data.startTimeUnixNano, "startTimeUnixNano"),
        end=_time(data.endTimeUnixNano, "endTimeUnixNano"),
        attributes=_attributes(data.attributes),
        events=tuple(_event(e) for e in data.events) if data.events else (),
        scope=scope,
        status=_status(data.status),
        order=order,
        source=source,
    )


def _scope_name(scoped: _Scoped) -> str:
    scope = scoped.scope or scoped.instrumentationLibrary or {}
    return str(scope.get("name", "") if isinstance(scope, dict) else "")


def _all_spans(documents: list[_Document], source: str) -> list[Span]:
    out: list[Span] = []
    ids = _Ids()
    for document in documents:
        for resource in document.resourceSpans:
            for scoped in resource.scopeSpans or resource.instrumentationLibrarySpans:
                scope = _scope_name(scoped)
                for data in scoped.spans:
                    out.append(_span(data, scope, len(out), source, ids))
    return out


def _documents(text: str) -> list[_Document]:
    """One document, or one per non-blank line (JSON Lines), split as the stdlib reader
    splits them: at line feeds only (a JSON string may hold U+2028 or U+0085 as they are)."""
    try:
        return [_DECODER.decode(text)]
    except msgspec.ValidationError:
        raise
    except msgspec.DecodeError as exc:
        if "trailing characters" not in str(exc):  # not JSON Lines: the stdlib reader says why
            raise
    return [_DECODER.decode(line) for line in text.split("\n") if line.strip()]


def spans_of_text(text: str, source: str) -> list[Span] | None:
    """The spans of a trace file's text, or ``None`` when the structs do not read it (the
    stdlib reader then reads it, or says what is wrong with it)."""
    try:
        return _all_spans(_documents(text), source)
    except (msgspec.MsgspecError, RecursionError, _Bad):
        return None
