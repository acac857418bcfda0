"""Expectations on offered tools and on toolset changes (injections, removals)."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence

from harness._errors import UsageError
from harness._validation import check_choice, is_int
from harness.assertions._labels import strategy_label
from harness.assertions._verdict import Expectation, Failure, after_last, in_turn
from harness.loop import ChangeRecord, Trace
from harness.loop._trace import Via
from harness.tools import match_names

__all__ = ["injected", "matching", "never_offered", "offered", "removed"]


def matching(pattern: str, names: Iterable[str]) -> list[str]:
    """Names matching ``pattern`` (an exact name or an ``fnmatch`` glob, case-sensitive)."""
    return match_names(pattern, names)


def _patterns(value: str | Sequence[str], what: str) -> tuple[str, ...]:
    items = (value,) if isinstance(value, str) else tuple(value)
    for item in items:
        if not isinstance(item, str) or not item:
            raise UsageError(f"{what} takes tool names or globs, got {item!r}")
    return items


def _show(names: Sequence[str], limit: int = 12) -> str:
    shown = list(names[:limit])
    more = f" (+{len(names) - limit} more)" if len(names) > limit else ""
    return f"{shown}{more}"


def _resolve_iteration(trace: Trace, at: int) -> int | None:
    """The recorded index of ``trace``'s request at 1-based position ``at`` (negative
    counts from the end), or ``None`` if absent. In one turn of a session's trace
    (``turn=``) ``at=1`` is the turn's first request, whose index counts the session's."""
    position = at if at > 0 else len(trace.iterations) + at + 1
    if not 1 <= position <= len(trace.iterations):
        return None
    return trace.iterations[position - 1].index


class _Offered(Expectation):
    def __init__(
        self,
        at: int,
        includes: tuple[str, ...],
        excludes: tuple[str, ...],
        exactly: tuple[str, ...] | None,
    ) -> None:
        if not is_int(at) or at == 0:
            raise UsageError(
                f"offered(at=...) takes a 1-based iteration (or -1 for the last), got {at!r}"
            )
        if not includes and not excludes and exactly is None:
            raise UsageError("offered(at=...) needs includes=, excludes= or exactly=")
        self.at, self.includes, self.excludes, self.exactly = at, includes, excludes, exactly

    @property
    def description(self) -> str:
        parts = []
        if self.includes:
            parts.append(f"includes {list(self.includes)}")
        if self.excludes:
            parts.append(f"excludes {list(self.excludes)}")
        if self.exactly is not None:
            parts.append(f"exactly {list(self.exactly)}")
        return f"offered at iteration {self.at} " + " and ".join(parts)

    def evaluate(self, trace: Trace) -> Failure | None:
        index = _resolve_iteration(trace, self.at)
        if index is None:
            return Failure(
                problem=f"the run has {len(trace.iterations)} iterations, no iteration {self.at}",
                iteration=after_last(trace),
                expected=self.description,
            )
        offered = next(it.offered for it in trace.iterations if it.index == index)

        def fail(problem: str, step: str) -> Failure:
            return Failure(problem=problem, iteration=index, expected=step)

        for pattern in self.includes:
            if not matching(pattern, offered):
                return fail(
                    f"{pattern!r} is not offered; offered {_show(offered, limit=3)}",
                    f"offered {pattern}",
                )
        for pattern in self.excludes:
            hit = matching(pattern, offered)
            if hit:
                return fail(f"{pattern!r} is offered: {_show(hit)}", f"not offered {pattern}")
        if self.exactly is not None:
            missing = [p for p in self.exactly if not matching(p, offered)]
            extra = [n for n in offered if not any(fnmatch.fnmatchcase(n, p) for p in self.exactly)]
            if missing or extra:
                return fail(
                    f"missing {missing}, unexpected {_show(extra)}",
                    f"offered exactly {list(self.exactly)}",
                )
        return None


def offered(
    *,
    at: int,
    includes: str | Sequence[str] = (),
    excludes: str | Sequence[str] = (),
    exactly: str | Sequence[str] | None = None,
    turn: int | None = None,
) -> Expectation:
    """The tools offered on request ``at`` (1-based; ``-1`` = the last; ``turn=``: of that
    user turn of a session) include / exclude names or globs, or are ``exactly`` the names
    matched by these patterns (any order)."""
    offered_at = _Offered(
        at,
        _patterns(includes, "offered(includes=...)"),
        _patterns(excludes, "offered(excludes=...)"),
        None if exactly is None else _patterns(exactly, "offered(exactly=...)"),
    )
    return in_turn(offered_at, turn)


class _NeverOffered(Expectation):
    def __init__(self, patterns: tuple[str, ...]) -> None:
        if not patterns:
            raise UsageError("never_offered() needs at least one tool name or glob")
        self.patterns = patterns

    @property
    def description(self) -> str:
        return f"never offered {list(self.patterns)}"

    def evaluate(self, trace: Trace) -> Failure | None:
        for it in trace.iterations:
            for pattern in self.patterns:
                hit = matching(pattern, it.offered)
                if hit:
                    return Failure(
                        problem=f"{pattern!r} is offered at iteration {it.index}: {_show(hit)}",
                        iteration=it.index,
                        expected=f"not offered {pattern}",
                    )
        return None


def never_offered(*patterns: str, turn: int | None = None) -> Expectation:
    """No request (``turn=``: of that user turn) offers a tool matching any of
    ``patterns``."""
    return in_turn(_NeverOffered(_patterns(patterns, "never_offered()")), turn)


_Entry = tuple[int, ChangeRecord, str]
"""An iteration, a change made in it, and how its added tools reached the model."""


def _entries(trace: Trace) -> list[_Entry]:
    """Every change with its delivery: the recorded ones (``edit``, ``addition``), the
    tools a search (or a result) revealed (``deferred+search``), and those a request's
    allowed subset let through that the last request's subset did not (``allowed``)."""
    out: list[_Entry] = []
    previous: tuple[str, ...] | None = None
    for it in trace.iterations:
        out.extend((it.index, change, change.via) for change in it.changes)
        if it.discovered:
            found = ChangeRecord(strategy="", reason="revealed", added=it.discovered)
            out.append((it.index, found, "deferred+search"))
        allowed = it.allowed
        if allowed is not None and previous is not None:
            new = tuple(n for n in allowed if n not in previous)
            if new:
                let = ChangeRecord(strategy="", reason="allowed", added=new)
                out.append((it.index, let, "allowed"))
        previous = allowed
    return out


class _Changed(Expectation):
    def __init__(
        self,
        kind: str,
        patterns: tuple[str, ...],
        at: int | None,
        after_call: str | None,
        strategy: str | None,
        via: str | None = None,
    ) -> None:
        if at is not None and (not is_int(at) or at == 0):
            raise UsageError(f"{kind}(at=...) takes a 1-based iteration, got {at!r}")
        if via is not None:
            check_choice(via, Via, name=f"{kind}(via=...)")
        self.kind, self.patterns, self.at = kind, patterns, at
        self.after_call, self.strategy, self.via = after_call, strategy, via

    @property
    def description(self) -> str:
        text = f"{self.kind} {list(self.patterns)}" if self.patterns else f"some tool {self.kind}"
        if self.at is not None:
            text += f" at iteration {self.at}"
        if self.after_call is not None:
            text += f" after a call of {self.after_call!r}"
        if self.strategy is not None:
            text += f" by strategy {self.strategy!r}"
        if self.via is not None:
            text += f" via {self.via!r}"
        return text

    def _names(self, change: ChangeRecord) -> tuple[str, ...]:
        return change.added if self.kind == "injected" else change.removed

    def _entries(self, trace: Trace) -> list[_Entry]:
        """The changes to read: with ``via``, every delivery; without, recorded changes
        (an edit or an addition), as before deliveries were told apart."""
        if self.kind == "injected" and self.via is not None:
            return _entries(trace)
        return [(it.index, c, c.via) for it in trace.iterations for c in it.changes]

    def _mismatches(
        self, iteration: int, change: ChangeRecord, index: int | None, via: str = "edit"
    ) -> list[str]:
        """What the filters wanted that ``change`` (recorded at ``iteration``, its tools
        delivered ``via``) is not; ``index`` is the iteration ``at`` names."""
        wanted = []
        if index is not None and iteration != index:
            wanted.append(f"at iteration {index}")
        if self.via is not None and via != self.via:
            wanted.append(f"via {self.via!r}")
        if self.after_call is not None and not (
            change.after_call is not None
            and fnmatch.fnmatchcase(change.after_call, self.after_call)
        ):
            wanted.append(f"after a call of {self.after_call!r}")
        if self.strategy is not None and not fnmatch.fnmatchcase(change.strategy, self.strategy):
            wanted.append(f"by {self.strategy!r}")
        return wanted

    def _filtered_out(self, trace: Trace, pattern: str, index: int | None) -> str | None:
        """Where ``pattern``'s tools were changed after all, and which filter each such
        change failed: ``injected at iteration 3 by 'playbook', not by 'Playbook'``."""
        seen = []
        for iteration, change, via in self._entries(trace):
            if change.initial or not matching(pattern, self._names(change)):
                continue
            recorded = f"{self.kind} at iteration {iteration}"
            if self.via is not None:
                recorded += f" via {via!r}"
            if change.strategy:
                recorded += f" by {change.strategy!r}"
                recorded += (
                    f" after a call of {change.after_call!r}"
                    if change.after_call is not None
                    else " (before a turn, after no call)"
                )
            wanted = self._mismatches(iteration, change, index, via)
            seen.append(f"{recorded}, not {' and not '.join(wanted)}")
        if not seen:
            return None
        more = f" (+{len(seen) - 3} more)" if len(seen) > 3 else ""
        return "; ".join(seen[:3]) + more

    def evaluate(self, trace: Trace) -> Failure | None:
        index = None if self.at is None else _resolve_iteration(trace, self.at)
        if self.at is not None and index is None:
            return Failure(
                problem=f"the run has {len(trace.iterations)} iterations, no iteration {self.at}",
                iteration=after_last(trace),
                expected=self.description,
            )
        names: list[str] = []
        all_names: list[str] = []
        set_up: list[str] = []
        for iteration, change, via in self._entries(trace):
            if index is not None and iteration != index:
                continue
            if change.initial:  # the toolset the run starts with, not an injection
                set_up.extend(self._names(change))
                continue
            all_names.extend(self._names(change))
            if not self._mismatches(iteration, change, index, via):
                names.extend(self._names(change))
        where = f" at iteration {index}" if index is not None else ""
        missing = [p for p in self.patterns if not matching(p, names)]
        if (self.patterns and missing) or (not self.patterns and not names):
            detail = (
                f"{self.kind}{where}: {_show(all_names)}"
                if all_names
                else f"nothing {self.kind}{where}"
            )
            if all_names and names != all_names:
                detail += f", of which matching the filters: {_show(names)}"
            elsewhere = self._filtered_out(trace, missing[0] if missing else "*", index)
            if elsewhere is not None:
                subject = f"{missing[0]!r} was not" if missing else "no tool was"
                actual = "it was" if missing else "tools were"
                return Failure(
                    problem=f"{subject} {self.kind} as asked: {actual} {elsewhere}",
                    iteration=index,
                    expected=self.description,
                )
            initial = [p for p in missing if matching(p, set_up)]
            if initial:
                detail += (
                    f"; {_show(initial)} set up before the first request (offered from "
                    "the start, see Trace.offered_at_start), which is not an injection"
                )
            shown = missing[0] if missing else "a tool"
            return Failure(
                problem=f"{shown!r} was not {self.kind}; {detail}",
                iteration=index,
                expected=self.description,
            )
        return None


def injected(
    *patterns: str,
    at: int | None = None,
    after_call: str | None = None,
    strategy: str | None = None,
    turn: int | None = None,
    via: str | None = None,
) -> Expectation:
    """Tools matching each pattern were added (no patterns: at least one tool was), at
    iteration ``at``, by a change caused by a call of ``after_call`` (name or glob), made
    by ``strategy`` (its recorded name, or a glob); ``turn=``: in that user turn of a
    session (``at`` counts its requests). Changes made before the run's first request (a
    playbook's first tools, a state machine's initial state) set up the starting toolset
    and are not injections: check those with ``offered(at=1, ...)``.

    ``via`` is how they reached the model: ``edit`` (declared in ``tools``), ``addition``
    (a client's mid-conversation addition, ``tools`` unchanged), ``deferred+search`` (a
    deferred tool a search or a result revealed: ``IterationRecord.discovered``) or
    ``allowed`` (let through a request's allowed subset that the last request's subset
    did not include). Without ``via`` only edits and additions count."""
    if isinstance(strategy, str):
        strategy = strategy_label(strategy, "injected(strategy=...)")
    change = _Changed("injected", _patterns(patterns, "injected()"), at, after_call, strategy, via)
    return in_turn(change, turn)


def removed(
    *patterns: str,
    at: int | None = None,
    after_call: str | None = None,
    strategy: str | None = None,
    turn: int | None = None,
) -> Expectation:
    """Like ``injected``, for tools removed from the offered toolset."""
    if isinstance(strategy, str):
        strategy = strategy_label(strategy, "removed(strategy=...)")
    change = _Changed("removed", _patterns(patterns, "removed()"), at, after_call, strategy)
    return in_turn(change, turn)
