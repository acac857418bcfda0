"""The compact injection timeline of a trace, and checking it against expectations."""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Sequence

from harness.loop import Trace
from harness.scenarios._spec import TimelineStep
from harness.tools import match_names

__all__ = ["Divergence", "TimelineRow", "check_timeline", "format_timeline", "timeline_rows"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class TimelineRow:
    """One iteration, compactly."""

    iteration: int
    offered: int
    offered_names: tuple[str, ...]
    calls: tuple[str, ...]
    errors: tuple[str, ...]
    injected: tuple[str, ...]
    removed: tuple[str, ...]
    answer: str | None
    final: bool
    to_user: tuple[str, ...] = ()
    """Calls whose result spoke to the user (non-silent ``user_content``)."""
    handoffs: tuple[str, ...] = ()
    """Calls that handed work to a nested run (agent or subagent tools: the call has
    child traces, ``CallRecord.children``)."""
    started: tuple[str, ...] = ()
    """Calls that started async work (``ToolResult.started``)."""
    follow_ups: tuple[str, ...] = ()
    """Tools whose async results reached the model on this iteration's request."""
    turn: int = 1
    """The user turn of a session the iteration belongs to."""
    continued: bool = False
    """A text answer that did not end the turn (a continuation policy kept it going)."""
    session: str | None = None
    """The session's name, in a file of several sessions."""
    deferred: tuple[str, ...] = ()
    """Tools deferred on the request (declared, not revealed yet)."""
    discovered: tuple[str, ...] = ()
    """Tools this turn's searches revealed."""
    searches: int = 0
    """How many tool searches this turn made."""
    allowed: tuple[str, ...] = ()
    """The allowed subset of the request's tool choice (empty: none)."""
    added: tuple[str, ...] = ()
    """The injected tools a client's mid-conversation addition delivered (``tools``
    unchanged: ``ChangeRecord.via == "addition"``); also in ``injected``."""

    def render(self) -> str:
        """``#2 offered=3 calls=a,b !b +x -y`` style text; with native tools
        ``deferred=?a,?b``, ``allowed=a``, ``searches=1``, ``discovered=+a`` and
        ``added=+a`` (injected by an addition)."""
        parts = [f"#{self.iteration}", f"offered={self.offered}"]
        if self.session is not None:
            parts.insert(0, f"[{self.session}]")
        if self.turn != 1:
            parts.insert(1, f"turn={self.turn}")
        if self.calls:
            parts.append("calls=" + ",".join(self.calls))
        if self.errors:
            parts.append("errors=" + ",".join(self.errors))
        if self.to_user:
            parts.append("to_user=" + ",".join(self.to_user))
        if self.handoffs:
            parts.append("handoff=" + ",".join(self.handoffs))
        if self.started:
            parts.append("started=" + ",".join(self.started))
        if self.follow_ups:
            parts.append("follow_ups=" + ",".join(self.follow_ups))
        if self.deferred:
            parts.append("deferred=" + ",".join(f"?{n}" for n in self.deferred))
        if self.allowed:
            parts.append("allowed=" + ",".join(self.allowed))
        if self.searches:
            parts.append(f"searches={self.searches}")
        if self.discovered:
            parts.append("discovered=" + ",".join(f"+{n}" for n in self.discovered))
        edited = [n for n in self.injected if n not in self.added]
        if edited:
            parts.append("+" + ",".join(edited))
        if self.added:
            parts.append("added=" + ",".join(f"+{n}" for n in self.added))
        if self.removed:
            parts.append("-" + ",".join(self.removed))
        if self.final or self.continued:
            text = (self.answer or "").replace("\n", " ")
            parts.append(f"{'answer' if self.final else 'continued'}={text[:60]!r}")
        return " ".join(parts)


def timeline_rows(trace: Trace) -> list[TimelineRow]:
    """One row per iteration of ``trace``."""
    rows = []
    follow_ups: dict[int, list[str]] = {}
    for record in trace.completions:
        if record.status == "delivered":
            follow_ups.setdefault(record.iteration, []).append(record.name)
    for it in trace.iterations:
        rows.append(
            TimelineRow(
                iteration=it.index,
                offered=len(it.offered),
                offered_names=it.offered,
                calls=tuple(c.name for c in it.calls),
                errors=tuple(c.name for c in it.calls if c.is_error),
                to_user=tuple(
                    c.name
                    for c in it.calls
                    if not c.silent
                    and c.user_content is not None
                    and c.user_content.strip()
                    and c.error_kind != "signal"
                ),
                handoffs=tuple(c.name for c in it.calls if c.children),
                started=tuple(c.name for c in it.calls if c.is_async),
                follow_ups=tuple(follow_ups.get(it.index, ())),
                injected=it.injected,
                removed=it.removed,
                answer=it.answer,
                final=not it.calls and it.finish_reason is not None and not it.continued,
                turn=it.turn,
                continued=it.continued,
                deferred=it.deferred,
                discovered=it.discovered,
                searches=it.searches,
                allowed=it.allowed or (),
                added=tuple(
                    n for c in it.changes if c.via == "addition" and not c.initial for n in c.added
                ),
            )
        )
    return rows


def format_timeline(rows: Sequence[TimelineRow]) -> str:
    """The rows as text, one per line."""
    return "\n".join(row.render() for row in rows)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Divergence:
    """Where a run first differed from the expected timeline."""

    iteration: int
    """1-based iteration (``len + 1`` when the run was too short)."""
    expected: str
    """What was expected there."""
    actual: str
    """What happened."""

    def __str__(self) -> str:
        return f"iteration {self.iteration}: expected {self.expected}, got {self.actual}"


def _names_match(patterns: Sequence[str], names: Sequence[str]) -> bool:
    return len(patterns) == len(names) and all(
        fnmatch.fnmatchcase(n, p) for p, n in zip(patterns, names, strict=True)
    )


def _globs_match(patterns: Sequence[str], names: Sequence[str]) -> bool:
    """Each glob matches some name (the meaning of ``injected(...)``); ``[]``: no names."""
    if not patterns:
        return not names
    return all(match_names(pattern, names) for pattern in patterns)


def _check_step(step: TimelineStep, row: TimelineRow) -> tuple[str, str] | None:
    """``(expected, actual)`` for the first mismatch of ``row`` with ``step``."""
    offered = list(row.offered_names)
    if step.offered is not None and step.offered != row.offered:
        return f"offered={step.offered}", f"offered={row.offered} {offered}"
    for pattern in step.offered_includes:
        if not match_names(pattern, row.offered_names):
            return f"{pattern!r} offered", f"offered {offered}"
    for pattern in step.offered_excludes:
        hit = match_names(pattern, row.offered_names)
        if hit:
            return f"{pattern!r} not offered", f"offered {hit}"
    checks = (
        ("calls", step.calls, row.calls),
        ("errors", step.errors, row.errors),
        ("to_user", step.to_user, row.to_user),
        ("handoffs", step.handoffs, row.handoffs),
        ("started", step.started, row.started),
        ("follow_ups", step.follow_ups, row.follow_ups),
        ("deferred", step.deferred, row.deferred),
        ("discovered", step.discovered, row.discovered),
        ("allowed", step.allowed, row.allowed),
        ("added", step.added, row.added),
    )
    for label, patterns, names in checks:
        if patterns is not None and not _names_match(patterns, names):
            return f"{label}={patterns}", f"{label}={list(names)}"
    for label, patterns, names in (
        ("injected", step.injected, row.injected),
        ("removed", step.removed, row.removed),
    ):
        if patterns is not None and not _globs_match(patterns, names):
            missing = [p for p in patterns if not match_names(p, names)]
            unmatched = f" (nothing matches {missing})" if missing else ""
            return f"{label}={patterns}{unmatched}", f"{label}={list(names)}"
    if step.searches is not None and step.searches != row.searches:
        return f"searches={step.searches}", f"searches={row.searches}"
    if step.answer is True and not row.final:
        return "a final answer", row.render()
    if isinstance(step.answer, str) and (
        not (row.final or row.continued) or row.answer != step.answer
    ):
        return f"answer={step.answer!r}", row.render()
    if step.continued is not None and step.continued != row.continued:
        return f"continued={step.continued}", row.render()
    return None


def check_timeline(
    expected: Sequence[TimelineStep], rows: Sequence[TimelineRow]
) -> Divergence | None:
    """The first divergence between ``expected`` and the actual ``rows``, or ``None``."""
    for index, step in enumerate(expected):
        if index >= len(rows):
            return Divergence(
                iteration=index + 1,
                expected=_describe(step),
                actual="the run ended (no such iteration)",
            )
        mismatch = _check_step(step, rows[index])
        if mismatch is not None:
            return Divergence(iteration=index + 1, expected=mismatch[0], actual=mismatch[1])
    if len(rows) > len(expected):
        return Divergence(
            iteration=len(expected) + 1,
            expected="the run to end",
            actual=rows[len(expected)].render(),
        )
    return None


def _describe(step: TimelineStep) -> str:
    data = step.model_dump(exclude_defaults=True)
    return ", ".join(f"{k}={v}" for k, v in data.items()) or "an iteration"
