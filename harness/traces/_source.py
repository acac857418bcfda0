"""Which reader reads a source: a trace file through msgspec's structs first (``_decode``,
when the ``otel`` extra installed msgspec), what they decline, every file without
msgspec and everything already in memory through the stdlib reader (``_spans``), whose
errors name the span at fault."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.traces._spans import Span, read_spans, read_trace_file, spans_of_text

__all__ = ["read_source"]


def read_source(source: Any) -> list[Span]:
    """Every span of ``source`` (a path, decoded documents or SDK spans: ``_spans``)."""
    if not isinstance(source, (str, Path)):
        return read_spans(source)
    name = str(source)
    text = read_trace_file(Path(source))
    try:
        from harness.traces._decode import spans_of_text as fast_spans
    except ImportError:  # no msgspec: the stdlib reader reads the same, about 2.5x slower
        return spans_of_text(text, name)
    fast = fast_spans(text, name)
    return fast if fast is not None else spans_of_text(text, name)
