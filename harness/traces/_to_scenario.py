"""A trace file as one scenario file that replays every model request it recorded.

The conversations become the same records a cassette's do (each request's history,
tools and answer), and the cassette's converter writes the scenario
(``harness.cassettes._to_scenario``): user turns, scripted steps, recorded tools as stubs
answering the recorded results, the tools offered request by request, the expected
timeline. It needs the content: a request without its history, its tool definitions or
(for the last one) its answer cannot be replayed, and the error says which and how to
record it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness._errors import TraceFileError
from harness.cassettes._conversations import Conversation
from harness.cassettes._load import Cassette, HTTPExchange, Interaction
from harness.cassettes._to_scenario import scenario_of_conversations
from harness.formats import ParsedRequest
from harness.traces._assemble import response_of
from harness.traces._conversations import OtelConversation, otel_conversations
from harness.traces._facts import RequestFacts

__all__ = ["otel_cassette_conversations", "otel_scenario_data"]

_HOW = (
    "record the trace with content capture on (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_"
    "CONTENT=SPAN_ONLY for the OpenTelemetry instrumentations, include_content for "
    "pydantic-ai, TRACELOOP_TRACE_CONTENT=true for OpenLLMetry; OpenInference records it "
    "by default)"
)


def _check(request: RequestFacts, number: int, last: bool, label: str) -> None:
    lacking = []
    if request.messages is None:
        lacking.append("the history it sent")
    if request.tools is None:
        lacking.append("its tool definitions")
    if last and request.output is None:
        lacking.append("the answer")
    lacking.extend(sorted(request.redacted))
    if lacking:
        raise TraceFileError(
            f"{label}: model request {number} ({request.span.label}) cannot be replayed: the "
            f"trace lacks {', '.join(lacking)}; {_HOW}",
            path=label,
            span=request.span.span_id,
        )


def _conversation(found: OtelConversation, start: int, label: str) -> Conversation:
    requests = found.requests
    for k, request in enumerate(requests):
        _check(request, start + k + 1, k == len(requests) - 1, label)
    empty = HTTPExchange(headers={}, body=b"")
    return Conversation(
        interactions=tuple(
            Interaction(
                index=start + k,
                method="POST",
                uri=f"otel:span/{r.span.span_id}",
                request=empty,
                status=500 if r.error else 200,
                response=empty,
            )
            for k, r in enumerate(requests)
        ),
        requests=tuple(
            ParsedRequest(
                model=r.model,
                messages=r.messages or (),
                tools=r.tools or (),
                stream=r.stream,
                tool_choice=r.tool_choice,
            )
            for r in requests
        ),
        responses=tuple(response_of(r) for r in requests),
        formats=tuple(r.provider or "" for r in requests),
    )


def otel_cassette_conversations(source: Any) -> list[Conversation]:
    """The conversations of a trace source as the cassette converter's ``Conversation``
    records (each request numbered in the order the file holds it)."""
    label = str(source) if isinstance(source, (str, Path)) else "<spans>"
    converted = []
    start = 0
    for item in otel_conversations(source):
        converted.append(_conversation(item, start, label))
        start += len(item.requests)
    return converted


def otel_scenario_data(
    source: Any,
    *,
    name: str | None = None,
    conversation: int | None = None,
    tools: str | None = None,
    strategies: Sequence[str] = (),
) -> dict[str, Any]:
    """One scenario file replaying the conversations of a trace source (every recorded model
    request, in order; ``conversation``: only that one, 0-based). ``tools``
    (``"module:factory()"``) and ``strategies`` bind your own tools instead of stubs, as
    ``harness cassette to-scenario`` does."""
    converted = otel_cassette_conversations(source)
    named = Cassette(
        path=Path(source) if isinstance(source, (str, Path)) else None,
        interactions=(),
        variant="otlp-json",
    )
    return scenario_of_conversations(
        named,
        converted,
        name=name,
        conversation=conversation,
        tools=tools,
        strategies=strategies,
        origin="OpenTelemetry trace",
    )
