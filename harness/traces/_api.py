"""The public functions: a run out as spans or an OTLP JSON file, spans in as a ``Trace``."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness._errors import UsageError
from harness._extras import require
from harness.loop import Trace
from harness.traces._conversations import otel_conversations
from harness.traces._export import ExportOptions, emit

__all__ = [
    "encode_runs",
    "export_otel",
    "otel_json",
    "trace_from_otel",
    "write_document",
    "write_otel",
]


def trace_from_otel(source: Any, *, conversation: int | None = None) -> Trace:
    """The harness ``Trace`` of the conversation in OpenTelemetry spans: an OTLP JSON file
    (a path; one document or JSON Lines), its decoded documents, or SDK spans.

    A file holding several conversations (several traces, or several agent runs) needs
    ``conversation`` (0-based, in the order they start); a run nested in another's tool
    call is part of that one's trace (``Trace.children``), not a conversation to pick.
    ``TraceFileError`` when the source cannot be read, naming the span at fault.
    """
    found = [c for c in otel_conversations(source) if c.parent is None]
    if not found:
        raise UsageError("the spans hold no model request (no inference span in any flavour)")
    if conversation is None:
        if len(found) > 1:
            names = ", ".join(f"{k}: {c.name}" for k, c in enumerate(found))
            raise UsageError(
                f"the spans hold {len(found)} conversations ({names}); pick one with "
                "trace_from_otel(source, conversation=N), or read them all with "
                "otel_conversations(source)"
            )
        return found[0].trace()
    if not 0 <= conversation < len(found):
        raise UsageError(
            f"conversation={conversation!r} is out of range: the spans hold {len(found)} "
            "conversation(s), numbered from 0"
        )
    return found[conversation].trace()


def _options(options: Mapping[str, Any]) -> ExportOptions:
    try:
        return ExportOptions(**options)
    except TypeError as exc:
        raise UsageError(f"unknown export option: {exc}") from None


def export_otel(source: Any, *, tracer_provider: Any = None, **options: Any) -> None:
    """Emit a run as OpenTelemetry spans through ``tracer_provider`` (the global one when
    ``None``): a ``Trace``, a ``RunResult`` or a ``Session`` (the last two add the history
    each request sent). Options: ``content`` (record messages, arguments and results;
    default true, scrubbed of known secrets), ``name`` (the agent name), ``model``,
    ``provider``, ``kind``, ``attributes`` (more attributes on the run's span), ``cost``
    (a ``harness.cost.CostReport``: its cache breaks go on the requests)."""
    emit([(source, _options(options))], tracer_provider)


def encode_runs(items: Sequence[tuple[Any, ExportOptions]]) -> dict[str, Any]:
    """``(run, options)`` pairs as one OTLP JSON document, each run its own trace."""
    require("opentelemetry.sdk", "writing OTLP JSON", extra="otel")
    require("opentelemetry.exporter.otlp.json.common", "writing OTLP JSON", extra="otel")
    from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from harness._version import __version__

    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": "harness", "service.version": __version__}),
        span_limits=SpanLimits(max_events=100_000, max_attributes=1_000),
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        emit(items, provider)
        spans = exporter.get_finished_spans()
    finally:
        provider.shutdown()
    encoded: dict[str, Any] = encode_spans(spans).to_dict()
    return encoded


def _items(sources: Any, options: Mapping[str, Any]) -> list[tuple[Any, ExportOptions]]:
    chosen = _options(options)
    if isinstance(sources, Trace) or hasattr(sources, "trace"):
        return [(sources, chosen)]
    if not isinstance(sources, Iterable):
        raise UsageError(f"export a run, or a list of runs; got {type(sources).__name__}")
    return [(s, chosen) for s in sources]


def otel_json(sources: Any, **options: Any) -> dict[str, Any]:
    """Runs as one OTLP JSON document (``{"resourceSpans": [...]}``): each run (a ``Trace``,
    ``RunResult`` or ``Session``, or a list of them) its own OpenTelemetry trace. The options
    are ``export_otel``'s."""
    return encode_runs(_items(sources, options))


def write_otel(sources: Any, path: str | Path, *, append: bool = False, **options: Any) -> Path:
    """Write runs to an OTLP JSON file, as the Collector's file exporter writes them: one
    ``{"resourceSpans": [...]}`` document per line (``append``: add a line to the file).
    ``harness trace show`` and ``trace_from_otel`` read it; so do trace viewers that
    import OTLP JSON. The options are ``export_otel``'s."""
    return write_document(otel_json(sources, **options), Path(path), append=append)


def write_document(document: Mapping[str, Any], path: Path, *, append: bool = False) -> Path:
    """One OTLP JSON document as a line of ``path`` (``append``: after what it holds)."""
    line = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w", encoding="utf-8") as file:
        file.write(line + "\n")
    return path
