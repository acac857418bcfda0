"""Invariants every run must keep, checked from what the run left behind (trace + history).

The checker reads only public records: the ``Trace``, the message history, and
optionally the tool definitions the model was sent and the secrets to look for. It
works for any run: the fuzzer's, a scenario file's (``expect: {invariants: true}``)
or one of yours::

    violations = check_invariants(result.trace, result.messages, secrets=["sk-..."])
    assert not violations, format_violations(violations)
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence

from harness._errors import HarnessError, MaxIterationsExceeded
from harness.loop import ChangeRecord, Trace
from harness.messages import AssistantMessage, Message, ToolMessage
from harness.tools import ToolDefinition, is_valid_name

__all__ = ["INVARIANTS", "Violation", "check_invariants", "format_violations"]

INVARIANTS = (
    "history",
    "calls_answered",
    "toolset_explained",
    "exclusive",
    "names",
    "limits",
    "secrets",
)
"""The names of the invariants ``check_invariants`` checks, in the order it checks them."""

_MIN_SECRET = 4  # shorter values would match by accident everywhere
_UNFOLDING = "unfolding"  # the strategy name facade changes carry (harness.injection)
_EXCLUSIVE_MARK = "; exclusive: hid "  # how an exclusive facade's change reason lists the hidden


@dataclasses.dataclass(frozen=True, kw_only=True)
class Violation:
    """One broken invariant."""

    invariant: str
    """Which invariant (one of ``INVARIANTS``, or ``determinism`` / ``restart_equivalence``)."""
    message: str
    """What was wrong, with the names and ids involved."""
    iteration: int | None = None
    """The 1-based iteration where it was seen, when it belongs to one."""

    def __str__(self) -> str:
        where = f" (iteration {self.iteration})" if self.iteration is not None else ""
        return f"[{self.invariant}]{where} {self.message}"


def format_violations(violations: Sequence[Violation]) -> str:
    """One violation per line, for assertion messages and reports."""
    return "\n".join(str(v) for v in violations)


def check_invariants(
    trace: Trace,
    messages: Sequence[Message],
    *,
    error: BaseException | None = None,
    max_iterations: int | None = None,
    secrets: Iterable[str] = (),
    definitions: Iterable[ToolDefinition] = (),
) -> list[Violation]:
    """Every broken invariant of one run (empty when the run is sound).

    ``error`` is the exception the run ended with, if any; ``max_iterations`` the
    limit it ran under; ``secrets`` values that must never reach the model;
    ``definitions`` the tool definitions the model was sent (``ModelRequest.tools``).
    """
    found: list[Violation] = []
    found += _check_history(messages)
    found += _check_calls_answered(trace, messages)
    found += _check_toolset(trace)
    found += _check_exclusive(trace)
    found += _check_names(trace)
    found += _check_limits(trace, error, max_iterations)
    found += _check_secrets(trace, messages, secrets, definitions)
    return found


def _check_history(messages: Sequence[Message]) -> list[Violation]:
    """Every tool call is answered by exactly one tool message, right after it, in order."""
    out: list[Violation] = []
    seen: set[str] = set()
    expected: list[str] = []
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            if not expected:
                out.append(
                    Violation(
                        invariant="history",
                        message=f"message {index}: tool message for {message.tool_call_id!r} "
                        "answers no pending tool call",
                    )
                )
                continue
            want = expected.pop(0)
            if message.tool_call_id != want:
                out.append(
                    Violation(
                        invariant="history",
                        message=f"message {index}: expected the tool message for call {want!r}, "
                        f"got one for {message.tool_call_id!r}",
                    )
                )
            continue
        if expected:
            out.append(
                Violation(
                    invariant="history",
                    message=f"message {index} ({message.role}) comes before the tool messages "
                    f"of calls {expected}: every call must be answered first",
                )
            )
            expected = []
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.id in seen:
                    out.append(
                        Violation(
                            invariant="history",
                            message=f"message {index}: tool call id {call.id!r} is used twice",
                        )
                    )
                seen.add(call.id)
                expected.append(call.id)
    if expected:
        out.append(
            Violation(
                invariant="history",
                message=f"the history ends with unanswered tool calls {expected}",
            )
        )
    return out


def _check_calls_answered(trace: Trace, messages: Sequence[Message]) -> list[Violation]:
    """Each recorded call has one tool message with its id, name and content, in order."""
    out: list[Violation] = []
    answers = [m for m in messages if isinstance(m, ToolMessage)]
    by_id: dict[str, list[ToolMessage]] = {}
    for message in answers:
        by_id.setdefault(message.tool_call_id, []).append(message)
    start = _last_run_start(trace)
    for it in trace.iterations[start:]:
        for record in it.calls:
            got = by_id.get(record.id, [])
            if len(got) != 1:
                out.append(
                    Violation(
                        invariant="calls_answered",
                        iteration=it.index,
                        message=f"call {record.name!r} (id {record.id!r}) has {len(got)} tool "
                        "messages; expected exactly one",
                    )
                )
            elif got[0].content != record.content:
                out.append(
                    Violation(
                        invariant="calls_answered",
                        iteration=it.index,
                        message=f"the tool message of call {record.id!r} differs from the "
                        "recorded result",
                    )
                )
    recorded = [c.id for it in trace.iterations[start:] for c in it.calls]
    answered = [m.tool_call_id for m in answers]
    if not out and recorded != answered:
        out.append(
            Violation(
                invariant="calls_answered",
                message=f"tool messages {answered} are not in the recorded call order {recorded}",
            )
        )
    return out


def _last_run_start(trace: Trace) -> int:
    """Index of the first iteration of the last (re)started run: iteration numbers restart."""
    start = 0
    for position, it in enumerate(trace.iterations):
        if position and it.index <= trace.iterations[position - 1].index:
            start = position
    return start


def _apply(offered: list[str], names: Iterable[str], *, remove: bool) -> None:
    for name in names:
        if remove:
            if name in offered:
                offered.remove(name)
        elif name not in offered:
            offered.append(name)


def _apply_change(offered: list[str], change: ChangeRecord) -> None:
    """What the loop does: remove, then replace (which adds a missing tool), then add."""
    _apply(offered, change.removed, remove=True)
    _apply(offered, change.replaced, remove=False)
    _apply(offered, change.added, remove=False)


def _check_toolset(trace: Trace) -> list[Violation]:
    """Every change of the offered list between two requests is a recorded change."""
    out: list[Violation] = []
    current = list(trace.initial_tools)
    for it in trace.iterations:
        before = [c for c in it.changes if c.after_call is None]
        after = [c for c in it.changes if c.after_call is not None]
        for change in before:
            _check_added(out, change.added, current, it.index, change.strategy)
            _apply_change(current, change)
        # declared tools: deferred ones (behind a tool search) are declared, not offered,
        # until a search reveals them (a search's discovery is no change of the toolset)
        declared = [*it.offered, *(n for n in it.deferred if n not in it.offered)]
        if sorted(current) != sorted(declared):
            extra = sorted(set(declared) - set(current))
            missing = sorted(set(current) - set(declared))
            out.append(
                Violation(
                    invariant="toolset_explained",
                    iteration=it.index,
                    message=f"the offered tools changed without a recorded change: "
                    f"unexplained {extra}, missing {missing}",
                )
            )
        current = declared
        for change in after:
            if not change.reason:
                out.append(
                    Violation(
                        invariant="toolset_explained",
                        iteration=it.index,
                        message=f"a change by {change.strategy!r} has no reason",
                    )
                )
            _check_added(out, change.added, current, it.index, change.strategy)
            _apply_change(current, change)
    return out


def _check_exclusive(trace: Trace) -> list[Violation]:
    """No facade puts back a tool an exclusive facade hid (in the same run attempt)."""
    out: list[Violation] = []
    hidden: dict[str, str] = {}  # name -> the change reason that hid it
    previous = 0
    for it in trace.iterations:
        if it.index <= previous:
            hidden.clear()  # a restart evaluates the run again from the start
        previous = it.index
        for change in it.changes:
            if change.strategy != _UNFOLDING:
                continue
            back = [n for n in (*change.replaced, *change.added) if n in hidden]
            if back:
                out.append(
                    Violation(
                        invariant="exclusive",
                        iteration=it.index,
                        message=f"{change.reason!r} put back {back}, hidden by an exclusive "
                        f"facade ({hidden[back[0]]!r})",
                    )
                )
            if _EXCLUSIVE_MARK in change.reason:
                hidden.update(dict.fromkeys(change.removed, change.reason))
    return out


def _check_added(
    out: list[Violation], added: Iterable[str], current: list[str], index: int, strategy: str
) -> None:
    early = [name for name in added if name in current]
    if early:
        out.append(
            Violation(
                invariant="toolset_explained",
                iteration=index,
                message=f"{strategy!r} injected {early}, which were already offered before "
                "they were injected",
            )
        )


def _check_names(trace: Trace) -> list[Violation]:
    out: list[Violation] = []
    valid: set[str] = set()  # names seen valid (most stay on offer for many requests)
    for it in trace.iterations:
        bad = [n for n in it.offered if n not in valid and not is_valid_name(n)]
        valid.update(n for n in it.offered if n not in bad)
        if bad:
            out.append(
                Violation(
                    invariant="names",
                    iteration=it.index,
                    message=f"offered names {bad} are not valid provider names "
                    "(^[a-zA-Z0-9_-]{1,64}$)",
                )
            )
        if len(set(it.offered)) != len(it.offered):
            dupes = sorted({n for n in it.offered if it.offered.count(n) > 1})
            out.append(
                Violation(
                    invariant="names",
                    iteration=it.index,
                    message=f"names offered twice on one request: {dupes}",
                )
            )
    return out


def _check_limits(
    trace: Trace, error: BaseException | None, max_iterations: int | None
) -> list[Violation]:
    out: list[Violation] = []
    runs = len(trace.iterations) - _last_run_start(trace)
    if max_iterations is not None and runs > max_iterations:
        out.append(
            Violation(
                invariant="limits",
                message=f"{runs} model requests in one run, over max_iterations={max_iterations}",
            )
        )
    if isinstance(error, MaxIterationsExceeded):
        if max_iterations is not None and runs != max_iterations:
            out.append(
                Violation(
                    invariant="limits",
                    message=f"MaxIterationsExceeded after {runs} requests, "
                    f"not max_iterations={max_iterations}",
                )
            )
        if not trace.events or trace.events[-1].kind != "LimitReached":
            out.append(
                Violation(
                    invariant="limits",
                    message="MaxIterationsExceeded without a LimitReached event at the end",
                )
            )
    if error is not None and not isinstance(error, HarnessError):
        out.append(
            Violation(
                invariant="limits",
                message=f"the run ended with an untyped error {type(error).__name__}: {error}",
            )
        )
    return out


def _check_secrets(
    trace: Trace,
    messages: Sequence[Message],
    secrets: Iterable[str],
    definitions: Iterable[ToolDefinition],
) -> list[Violation]:
    values = sorted({s for s in secrets if isinstance(s, str) and len(s) >= _MIN_SECRET})
    if not values:
        return []
    dumped = [message.model_dump_json() for message in messages]
    shown = [(definition.name, definition.to_data()) for definition in definitions]
    # Fast path: one text of everything the model saw (definitions in one dump); only
    # when a secret is in it are the places looked at one by one, to say where.
    everything = "\n".join(
        [
            *dumped,
            *(" ".join(it.offered) for it in trace.iterations),
            *(record.content for it in trace.iterations for record in it.calls),
            json.dumps([data for _, data in shown], default=str),
        ]
    )
    if not any(s in everything for s in values):
        return []
    places: list[tuple[str, str]] = []
    for index, (message, text) in enumerate(zip(messages, dumped, strict=True)):
        places.append((f"message {index} ({message.role})", text))
    for it in trace.iterations:
        places.append((f"iteration {it.index} offered names", " ".join(it.offered)))
        for record in it.calls:
            places.append((f"iteration {it.index} result of {record.name!r}", record.content))
    for name, data in shown:
        places.append((f"definition of {name!r}", json.dumps(data, default=str)))
    out = []
    for where, text in places:
        leaked = [f"{s[:2]}…" for s in values if s in text]
        if leaked:
            out.append(
                Violation(
                    invariant="secrets",
                    message=f"a secret ({', '.join(leaked)}) is visible to the model in {where}",
                )
            )
    return out
