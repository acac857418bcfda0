"""Spans read within bounds: an OpenTelemetry trace file, or spans already in memory.

A source is one of:

- an OTLP JSON file (a path): one ``{"resourceSpans": [...]}`` document, or JSON Lines of
  them as the Collector's file exporter and ``opentelemetry-exporter-otlp-json-file``
  write them;
- the same already decoded (a dict, or a list of dicts);
- spans of the OpenTelemetry SDK (``ReadableSpan``: what ``InMemorySpanExporter`` holds).

A trace file may come from anywhere, so reading one is bounded: the file size
(``MAX_FILE_BYTES``), how deeply a structured value nests (``MAX_DEPTH``), and how long
one attribute value may be (``MAX_ATTRIBUTE_CHARS``). Attribute values are decoded when a
reader asks for them, so a file costs what its model requests and tool calls cost. Any
problem is a ``TraceFileError`` that names the file and the span at fault.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness._errors import TraceFileError

__all__ = [
    "MAX_ATTRIBUTE_CHARS",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "Span",
    "SpanEvent",
    "read_spans",
]

MAX_FILE_BYTES = 512 * 1024 * 1024
"""The largest trace file read (512 MiB: a hundred thousand spans with content fit)."""

MAX_DEPTH = 64
"""How deeply a structured attribute value may nest (JSON text in a string attribute nests
as deep as the JSON reader allows: the readers never walk it recursively)."""

MAX_ATTRIBUTE_CHARS = 64 * 1024 * 1024
"""The longest attribute value read (64 Mi characters)."""

_HEX = re.compile(r"[0-9a-fA-F]+")
_STATUS = {0: "unset", 1: "ok", 2: "error", "STATUS_CODE_UNSET": "unset"}
_STATUS.update({"STATUS_CODE_OK": "ok", "STATUS_CODE_ERROR": "error"})


_UNSET: Any = object()


class _Bad(Exception):
    """A value of the wrong shape, raised while decoding and turned into a ``TraceFileError``
    that names the span."""


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class SpanEvent:
    """An event recorded on a span."""

    name: str
    time: int
    attributes: Mapping[str, Any]


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class Span:
    """One span, as the readers see it (attribute values decoded on first use)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    """Start time, nanoseconds since the epoch."""
    end: int
    attributes: Mapping[str, Any]
    events: tuple[SpanEvent, ...]
    scope: str
    """The instrumentation scope that made it (``opentelemetry.instrumentation.openai``)."""
    status: str
    """``unset``, ``ok`` or ``error``."""
    order: int
    """Position in the source (ties in start time keep it)."""
    source: str = ""
    """The file it came from (for messages)."""

    @property
    def label(self) -> str:
        """``span 5f0c... ('chat gpt-4o')`` for messages."""
        return f"span {self.span_id} ({self.name!r})"

    def error(self, problem: str) -> TraceFileError:
        """A ``TraceFileError`` about this span."""
        where = f"{self.source}: " if self.source else ""
        return TraceFileError(
            f"{where}{self.label}: {problem}", path=self.source, span=self.span_id
        )

    def get(self, key: str, default: Any = None) -> Any:
        """The attribute ``key`` decoded (``default`` when absent); a value of the wrong
        shape is a ``TraceFileError`` naming this span and the attribute."""
        try:
            return self.attributes.get(key, default)
        except _Bad as exc:
            raise self.error(f"attribute {key!r}: {exc}") from None

    def text(self, key: str) -> str | None:
        """The attribute ``key`` as text (numbers and booleans as JSON), or ``None``."""
        value = self.get(key)
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, (bool, int, float)):
            return json.dumps(value)
        raise self.error(f"attribute {key!r} should be a string, got {type(value).__name__}")

    def json(self, key: str) -> Any:
        """The attribute ``key`` as a value: decoded from JSON text when it is a string
        (instrumentations that cannot set structured attributes store JSON), as it is when
        structured; ``None`` when absent. Bounded like the file (``MAX_DEPTH``)."""
        value = self.get(key)
        if not isinstance(value, str):
            return value
        return self.parse_json(value, what=f"attribute {key!r}")

    def parse_json(self, text: str, *, what: str) -> Any:
        """``text`` parsed as JSON within ``MAX_DEPTH``; a ``TraceFileError`` naming the span
        and ``what`` when it is not JSON or nests too deeply."""
        try:
            value = json.loads(text)
        except RecursionError:
            raise self.error(f"{what} nests deeper than the JSON reader allows") from None
        except ValueError as exc:
            raise self.error(f"{what} is not JSON ({exc}; cut short by a length limit?)") from None
        # the readers walk messages and parts at fixed depths, never recursively: deeper
        # nesting inside a value costs nothing more than the parse did
        return value

    def keys_with_prefix(self, prefix: str) -> list[str]:
        """The attribute keys that start with ``prefix``."""
        return [k for k in self.attributes if k.startswith(prefix)]


# -- OTLP JSON values ----------------------------------------------------------------------


def _any_value(value: Any, depth: int) -> Any:
    """An OTLP ``AnyValue`` as a Python value (strings, ints, floats, bools, lists, dicts)."""
    if not isinstance(value, dict):
        raise _Bad(f"expected an AnyValue object, got {type(value).__name__}")
    if depth > MAX_DEPTH:
        raise _Bad(f"the value nests deeper than {MAX_DEPTH} levels")
    if "stringValue" in value:
        text = value["stringValue"]
        if not isinstance(text, str):
            raise _Bad(f"stringValue should be a string, got {type(text).__name__}")
        if len(text) > MAX_ATTRIBUTE_CHARS:
            raise _Bad(f"the value is longer than {MAX_ATTRIBUTE_CHARS} characters")
        return text
    if "intValue" in value:
        number = value["intValue"]
        if isinstance(number, bool) or not isinstance(number, (int, str)):
            raise _Bad(f"intValue should be an integer, got {number!r:.40}")
        try:
            return int(number)
        except ValueError:
            raise _Bad(f"intValue should be an integer, got {number!r:.40}") from None
    if "boolValue" in value:
        flag = value["boolValue"]
        if not isinstance(flag, bool):
            raise _Bad(f"boolValue should be true or false, got {flag!r:.40}")
        return flag
    if "doubleValue" in value:
        number = value["doubleValue"]
        if isinstance(number, bool) or not isinstance(number, (int, float, str)):
            raise _Bad(f"doubleValue should be a number, got {number!r:.40}")
        try:
            return float(number)
        except ValueError:
            raise _Bad(f"doubleValue should be a number, got {number!r:.40}") from None
    if "arrayValue" in value:
        items = _values(value["arrayValue"], "arrayValue")
        return [_any_value(v, depth + 1) for v in items]
    if "kvlistValue" in value:
        pairs = _values(value["kvlistValue"], "kvlistValue")
        out: dict[str, Any] = {}
        for pair in pairs:
            key, item = _pair(pair)
            out[key] = _any_value(item, depth + 1) if item is not None else None
        return out
    if "bytesValue" in value:
        data = value["bytesValue"]
        if not isinstance(data, str):
            raise _Bad(f"bytesValue should be base64 text, got {type(data).__name__}")
        return data
    return None  # an empty AnyValue


def _values(holder: Any, kind: str) -> list[Any]:
    if not isinstance(holder, dict):
        raise _Bad(f"{kind} should be an object, got {type(holder).__name__}")
    items = holder.get("values", [])
    if not isinstance(items, list):
        raise _Bad(f"{kind}.values should be a list, got {type(items).__name__}")
    return items


def _pair(pair: Any) -> tuple[str, Any]:
    if not isinstance(pair, dict) or not isinstance(pair.get("key"), str):
        raise _Bad(f"expected a {{key, value}} object, got {pair!r:.60}")
    return pair["key"], pair.get("value")


class _Attributes(Mapping[str, Any]):
    """An OTLP attribute list, keyed by name; each value decoded on first use."""

    __slots__ = ("_decoded", "_raw")

    def __init__(self, raw: dict[str, Any]) -> None:
        self._raw = raw
        self._decoded: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        try:
            return self._decoded[key]
        except KeyError:
            pass
        raw = self._raw[key]
        value = _any_value(raw, 1) if raw is not None else None
        self._decoded[key] = value
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def get(self, key: str, default: Any = None) -> Any:
        decoded = self._decoded.get(key, _UNSET)
        if decoded is not _UNSET:
            return decoded
        raw = self._raw.get(key, _UNSET)
        if raw is _UNSET:
            return default
        value = _any_value(raw, 1) if raw is not None else None
        self._decoded[key] = value
        return value


def _attribute_map(items: Any) -> _Attributes:
    if items is None:
        return _Attributes({})
    if not isinstance(items, list):
        raise _Bad(f"attributes should be a list, got {type(items).__name__}")
    try:
        raw = {a["key"]: a.get("value") for a in items}
        if all(type(k) is str for k in raw):
            return _Attributes(raw)
    except (TypeError, KeyError, AttributeError):
        pass
    for item in items:
        _pair(item)  # names the entry at fault
    raise _Bad("attributes hold an entry of the wrong shape")


# -- ids, times, one span ------------------------------------------------------------------


def _id(value: Any, length: int, field: str) -> str:
    """A trace or span id as lower-case hex: OTLP JSON writes hex; protobuf's JSON mapping
    (some exporters) writes base64."""
    if not isinstance(value, str) or not value:
        raise _Bad(f"{field} should be a hex string, got {value!r:.40}")
    if len(value) == length * 2 and _HEX.fullmatch(value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != length:
        raise _Bad(f"{field} should be {length * 2} hex digits, got {value!r:.40}")
    return raw.hex()


def _time(value: Any, field: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise _Bad(f"{field} should be nanoseconds, got {value!r:.40}")
    try:
        return int(value)
    except ValueError:
        raise _Bad(f"{field} should be nanoseconds, got {value!r:.40}") from None


def _event(data: Any) -> SpanEvent:
    if not isinstance(data, dict):
        raise _Bad(f"an event should be an object, got {type(data).__name__}")
    name = data.get("name", "")
    if not isinstance(name, str):
        raise _Bad(f"an event's name should be a string, got {name!r:.40}")
    return SpanEvent(
        name=name,
        time=_time(data.get("timeUnixNano"), "event timeUnixNano"),
        attributes=_attribute_map(data.get("attributes")),
    )


def _status(data: Any) -> str:
    if data is None:
        return "unset"
    if not isinstance(data, dict):
        raise _Bad(f"status should be an object, got {type(data).__name__}")
    code = data.get("code", 0)
    if isinstance(code, bool) or code not in _STATUS:
        raise _Bad(f"status.code should be 0, 1 or 2, got {code!r:.40}")
    return _STATUS[code]


def _span(data: Any, scope: str, order: int, source: str) -> Span:
    if not isinstance(data, dict):
        raise _Bad(f"a span should be an object, got {type(data).__name__}")
    parent = data.get("parentSpanId")
    name = data.get("name", "")
    if not isinstance(name, str):
        raise _Bad(f"name should be a string, got {name!r:.40}")
    events = data.get("events") or ()
    if not isinstance(events, list) and events != ():
        raise _Bad(f"events should be a list, got {type(events).__name__}")
    return Span(
        trace_id=_id(data.get("traceId"), 16, "traceId"),
        span_id=_id(data.get("spanId"), 8, "spanId"),
        parent_id=_id(parent, 8, "parentSpanId") if parent else None,
        name=name,
        start=_time(data.get("startTimeUnixNano"), "startTimeUnixNano"),
        end=_time(data.get("endTimeUnixNano"), "endTimeUnixNano"),
        attributes=_attribute_map(data.get("attributes")),
        events=tuple(_event(e) for e in events),
        scope=scope,
        status=_status(data.get("status")),
        order=order,
        source=source,
    )


def _where_span(data: Any, where: str) -> str:
    """The id of a span given as data (when readable), else where it sits in the file."""
    span_id = data.get("spanId") if isinstance(data, dict) else None
    name = data.get("name") if isinstance(data, dict) else None
    if isinstance(span_id, str) and span_id:
        return f"span {span_id[:32]}" + (f" ({name[:80]!r})" if isinstance(name, str) else "")
    return where


def _list(holder: Any, key: str, where: str, source: str) -> list[Any]:
    if not isinstance(holder, dict):
        raise _file_error(source, f"{where} should be an object, got {type(holder).__name__}")
    items = holder.get(key, [])
    if not isinstance(items, list):
        raise _file_error(source, f"{where}.{key} should be a list, got {type(items).__name__}")
    return items


def _file_error(source: str, problem: str, span: str | None = None) -> TraceFileError:
    where = f"trace file {source!r}" if source else "the spans given"
    return TraceFileError(
        f"{where} is not readable as OTLP JSON: {problem}", path=source, span=span
    )


def spans_of_document(document: Any, source: str, start: int = 0) -> list[Span]:
    """The spans of one ``{"resourceSpans": [...]}`` document (``start``: the order of
    its first span among the source's)."""
    out: list[Span] = []
    for r, resource in enumerate(_list(document, "resourceSpans", "the document", source)):
        where_r = f"resourceSpans[{r}]"
        scopes = _list(resource, "scopeSpans", where_r, source)
        if not scopes and isinstance(resource, dict):  # OTLP before 0.19
            scopes = _list(resource, "instrumentationLibrarySpans", where_r, source)
        for s, scoped in enumerate(scopes):
            where_s = f"{where_r}.scopeSpans[{s}]"
            scope = scoped.get("scope") or scoped.get("instrumentationLibrary") or {}
            scope_name = scope.get("name", "") if isinstance(scope, dict) else ""
            for k, data in enumerate(_list(scoped, "spans", where_s, source)):
                try:
                    out.append(_span(data, str(scope_name), start + len(out), source))
                except _Bad as exc:
                    at = _where_span(data, f"{where_s}.spans[{k}]")
                    raise _file_error(source, f"{at}: {exc}", span=at) from None
    return out


# -- reading a source ----------------------------------------------------------------------


def _read_file(path: Path) -> str:
    name = str(path)
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise TraceFileError(
            f"cannot read trace file {name!r}: {exc.strerror or exc}", path=name
        ) from None
    if len(raw) > MAX_FILE_BYTES:
        raise _file_error(name, f"it is larger than {MAX_FILE_BYTES} bytes (MAX_FILE_BYTES)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _file_error(
            name, f"it is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from None


def _documents(text: str, source: str) -> list[Any]:
    """The JSON documents of a file: one, or one per line (JSON Lines)."""
    try:
        return [json.loads(text)]
    except RecursionError:
        raise _too_deep(text, source) from None
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            raise _file_error(source, f"it is not JSON ({exc})") from None
    documents = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            documents.append(json.loads(line))
        except RecursionError:
            raise _too_deep(line, source) from None
        except json.JSONDecodeError as exc:
            raise _file_error(source, f"line {number} is not JSON ({exc})") from None
    return documents


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_SPAN_ID = re.compile(r'"spanId"\s*:\s*"([^"\\]{0,64})"')


def _too_deep(text: str, source: str) -> TraceFileError:
    """The error for a document too deep for the JSON parser, naming the span around the
    first place it nests past ``MAX_DEPTH`` (a scan that stops there)."""
    depth, span_start = 0, None
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "{[":
            depth += 1
            if depth == 7 and token == "{":  # {resourceSpans[{scopeSpans[{spans[{ = a span
                span_start = match.start()
            if depth > MAX_DEPTH + 7:
                break
        elif token in "}]":
            depth -= 1
    found = _SPAN_ID.search(text, span_start) if span_start is not None else None
    span = f"span {found.group(1)}" if found else None
    where = f"{span}: an attribute" if span else "it"
    return _file_error(
        source, f"{where} nests deeper than the JSON reader allows (over {MAX_DEPTH} levels)", span
    )


def _sdk_spans(items: Sequence[Any]) -> list[Span]:
    """SDK ``ReadableSpan`` objects as spans (their attributes are Python values already)."""
    out = []
    for order, item in enumerate(items):
        context = item.context
        parent = item.parent
        status = getattr(getattr(item.status, "status_code", None), "name", "UNSET").lower()
        scope = getattr(item, "instrumentation_scope", None)
        out.append(
            Span(
                trace_id=f"{context.trace_id:032x}",
                span_id=f"{context.span_id:016x}",
                parent_id=f"{parent.span_id:016x}" if parent is not None else None,
                name=str(item.name),
                start=int(item.start_time or 0),
                end=int(item.end_time or 0),
                attributes=_plain(item.attributes),
                events=tuple(
                    SpanEvent(
                        name=e.name, time=int(e.timestamp or 0), attributes=_plain(e.attributes)
                    )
                    for e in item.events
                ),
                scope=getattr(scope, "name", "") or "",
                status=status if status in ("ok", "error") else "unset",
                order=order,
            )
        )
    return out


def _sdk_event(event: Any) -> SpanEvent:
    return SpanEvent(
        name=event.name, time=int(event.timestamp or 0), attributes=_plain(event.attributes)
    )


def _plain(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in (attributes or {}).items()}


def read_spans(source: Any) -> list[Span]:
    """Every span of ``source`` (see the module docstring for what a source is)."""
    if isinstance(source, (str, Path)):
        name = str(source)
        return _from_documents(_documents(_read_file(Path(source)), name), name)
    if isinstance(source, dict):
        return spans_of_document(source, "")
    if isinstance(source, Iterable) and not isinstance(source, (bytes, bytearray)):
        items = list(source)
        if all(isinstance(i, dict) for i in items):
            return _from_documents(items, "")
        if all(hasattr(i, "context") and hasattr(i, "attributes") for i in items):
            return _sdk_spans(items)
    raise TraceFileError(
        "read OpenTelemetry spans from an OTLP JSON file (a path), its decoded documents "
        "({'resourceSpans': [...]}) or SDK spans (InMemorySpanExporter.get_finished_spans()); "
        f"got {type(source).__name__}"
    )


def _from_documents(documents: list[Any], source: str) -> list[Span]:
    out: list[Span] = []
    for document in documents:
        out.extend(spans_of_document(document, source, len(out)))
    return out
