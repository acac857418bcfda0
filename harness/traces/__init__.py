"""OpenTelemetry traces as test input and output.

Out: a harness run (``Trace``, ``RunResult``, ``Session``) as spans of the GenAI semantic
conventions plus ``harness.*`` attributes, through any tracer provider
(``export_otel``) or to an OTLP JSON file (``write_otel``, ``otel_json``).

In: spans from a file or memory in any of the flavours found in the wild (the current
``gen_ai.*`` conventions, OpenLLMetry's older flat attributes, OpenInference), grouped
into conversations (``otel_conversations``), each one the same harness ``Trace`` a
cassette or the wire fake gives (``trace_from_otel``).

OpenTelemetry itself is imported only to export (the ``otel`` extra); reading a file
needs nothing but the standard library.
"""

from __future__ import annotations

import typing

from harness._lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:  # the public API: each name once (harness._lazy reads this)
    from harness._errors import TraceFileError as TraceFileError
    from harness.traces._api import (
        export_otel as export_otel,
        otel_json as otel_json,
        trace_from_otel as trace_from_otel,
        write_otel as write_otel,
    )
    from harness.traces._conversations import (
        OtelConversation as OtelConversation,
        otel_conversations as otel_conversations,
    )


__getattr__, __dir__, __all__ = _lazy_exports(__name__, __file__, globals())
"""Lazy re-exports (PEP 562): ``__all__`` is the names imported above for type checkers."""
