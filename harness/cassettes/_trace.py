"""The wire trace: the harness ``Trace`` rebuilt from the requests an endpoint saw.

For an agent loop the harness did not write (another framework's agent pointed at
the in-process wire fake, or a cassette recorded from it), the sequence of LLM
requests tells the story: the tools offered on each request, the calls in each
response (from the response, or from the next request's history), the tool results
sent back, and the tools injected or removed between two requests. The result is
the same ``Trace`` a harness run produces, so ``harness.assertions`` and the
timeline snapshots work on it unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness._errors import UsageError
from harness.cassettes._load import Cassette, load_cassette
from harness.cassettes._model import llm_turns, recorded_request
from harness.formats import ParsedRequest, codec_for
from harness.loop import CallRecord, ChangeRecord, IterationRecord, ModelResponse, Trace
from harness.loop._tool_states import ToolStateTracker, discovery_of
from harness.messages import AssistantMessage, SystemMessage, ToolMessage

__all__ = ["client_searches", "trace_from_cassette", "trace_from_requests", "trace_from_wire"]


def _results(messages: Sequence[Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}


def _assistant_after(
    request: ParsedRequest, following: ParsedRequest | None
) -> AssistantMessage | None:
    if following is None:
        return None
    rest = following.messages[len(request.messages) :]
    for message in rest:
        if isinstance(message, AssistantMessage) and (message.content or message.tool_calls):
            return message
    return None


def client_searches(requests: Sequence[ParsedRequest]) -> tuple[str, ...]:
    """Tools whose results revealed tools, and said nothing else, anywhere in the
    conversation: a recording's custom search tool has no marker on the wire but its
    results of ``tool_reference`` blocks alone (a tool whose text result also revealed
    tools, such as an OpenAI ``additional_tools`` after it, is no search)."""
    names: dict[str, None] = {}
    calls: dict[str, str] = {}
    for request in requests:
        for message in request.messages:
            if isinstance(message, AssistantMessage):
                calls.update((c.id, c.name) for c in message.tool_calls)
            elif isinstance(message, ToolMessage) and message.tools and not message.content:
                name = calls.get(message.tool_call_id)
                if name is not None:
                    names.setdefault(name, None)
    return tuple(names)


def _changes(
    request: ParsedRequest, following: ParsedRequest | None, calls: Sequence[CallRecord]
) -> tuple[ChangeRecord, ...]:
    """The tools the next request offers differently: a changed ``tools`` array (an edit),
    and the tools the client added by a message between the two (an addition)."""
    if following is None:
        return ()
    added_by = {
        t.name: None
        for m in following.messages[len(request.messages) :]
        if isinstance(m, SystemMessage)
        for t in m.tools
    }
    before, after = request.tool_names, following.tool_names
    added = tuple(n for n in after if n not in before and n not in added_by)
    removed = tuple(n for n in before if n not in after)
    last = calls[-1] if calls else None
    out = []
    if added or removed:
        out.append(
            ChangeRecord(
                strategy="wire",
                reason="the next request offered different tools",
                added=added,
                removed=removed,
                after_call=last.name if last else None,
                after_call_id=last.id if last else None,
            )
        )
    if added_by:
        out.append(
            ChangeRecord(
                strategy="wire",
                reason="the client added tools to the conversation",
                added=tuple(added_by),
                after_call=last.name if last else None,
                after_call_id=last.id if last else None,
                via="addition",
            )
        )
    return tuple(out)


def trace_from_requests(
    requests: Sequence[ParsedRequest],
    responses: Sequence[ModelResponse | None] = (),
) -> Trace:
    """A ``Trace`` from one conversation's LLM requests (and, when known, the responses).

    A response that is not given is read from the next request's history; the last
    one is then unknown (no calls, no answer).
    """
    iterations: list[IterationRecord] = []
    tracker = ToolStateTracker()
    inferred = client_searches(requests)
    for k, request in enumerate(requests):
        states = tracker.states(request.as_model_request()).with_search(inferred)
        following = requests[k + 1] if k + 1 < len(requests) else None
        response = responses[k] if k < len(responses) else None
        message = response.message if response is not None else _assistant_after(request, following)
        results = _results(following.messages) if following is not None else {}
        calls = tuple(
            CallRecord(
                id=call.id,
                name=call.name,
                arguments=call.arguments,
                content=results[call.id].content if call.id in results else "",
            )
            for call in (message.tool_calls if message is not None else ())
        )
        changes = _changes(request, following, calls)
        answer = message.content if message is not None else None  # as the loop records it
        finish = None
        if response is not None:
            finish = response.finish_reason
        elif message is not None:
            finish = "tool_calls" if message.tool_calls else "stop"
        revealing = [results[c.id] for c in calls if c.id in results and results[c.id].tools]
        discovery = discovery_of(message, revealing, states.search)
        iterations.append(
            IterationRecord(
                index=k + 1,
                offered=request.tool_names if states.is_plain else states.offered,
                calls=calls,
                changes=changes,
                answer=answer,
                finish_reason=finish,
                tools=states,
                discovered=discovery.discovered,
                searches=discovery.searches,
            )
        )
    return Trace(iterations=iterations, initial_tools=requests[0].tool_names if requests else ())


def trace_from_cassette(source: str | Path | Cassette) -> Trace:
    """The ``Trace`` of a recorded conversation (every LLM request of the cassette)."""
    cassette = source if isinstance(source, Cassette) else load_cassette(source)
    requests: list[ParsedRequest] = []
    responses: list[ModelResponse | None] = []
    for interaction, codec in llm_turns(cassette):
        requests.append(recorded_request(cassette, interaction, codec))
        try:
            responses.append(
                codec.decode_response(
                    interaction.status, interaction.response.headers, interaction.response.body
                )
            )
        except Exception:  # an error status or a body the codec cannot read: unknown
            responses.append(None)
    return trace_from_requests(requests, responses)


def trace_from_wire(app: Any) -> Trace:
    """The ``Trace`` of the conversation a wire fake served (a ``WireApp``, ``WireServer``
    or a ``fake_openai_client``'s transport: anything with ``.requests``)."""
    source = getattr(app, "app", app)
    recorded = getattr(source, "requests", None)
    if recorded is None:
        raise UsageError(
            f"trace_from_wire needs a WireApp (or something with .requests), got {app!r}"
        )
    answers = list(getattr(source, "responses", ()) or ())
    requests: list[ParsedRequest] = []
    responses: list[ModelResponse | None] = []
    for i, item in enumerate(recorded):
        codec = codec_for(item.method, item.path.split("?", 1)[0])
        if codec is None or not isinstance(item.body, dict):
            continue
        try:
            requests.append(codec.parse_request(item.body))
        except ValueError:
            continue
        responses.append(answers[i] if i < len(answers) else None)
    return trace_from_requests(requests, responses)
