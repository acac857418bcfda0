"""A whole-timeline expectation written as a compact list of steps.

Text steps, read in order as the run unfolds::

    call NAME            the next tool call is NAME (a glob); every call must be listed
    error NAME           the next call is NAME and it ended in an error result
    offered N            the next request offers N tools
    offered includes G   the next request offers tools matching G (comma-separated globs)
    offered excludes G   ... offers nothing matching G
    offered exactly G    ... offers exactly the tools matched by G
    offered gains G      ... offers tools matching G that the previous request did not
    offered loses G      ... no longer offers tools matching G
    injected G           the turn just made (or a before-turn hook) added tools matching G
    removed G            ... removed tools matching G
    answer [TEXT]        the next request is the final answer (containing TEXT)

Per-iteration steps in the scenario format (dicts or ``TimelineStep``) are accepted
too and checked with ``harness.scenarios.check_timeline``.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from harness._errors import UsageError
from harness.assertions._offered import matching
from harness.assertions._verdict import Expectation, Failure, Verdict, for_assert
from harness.loop import IterationRecord, Trace
from harness.scenarios import TimelineStep, check_timeline, timeline_rows

__all__ = ["expect_timeline", "timeline"]

_OFFERED_KINDS = ("includes", "excludes", "exactly", "gains", "loses")
_FORMS = (
    "'call NAME', 'error NAME', 'offered N', 'offered includes|excludes|exactly|gains|loses "
    "GLOB[, GLOB]', 'injected GLOB', 'removed GLOB', 'answer [TEXT]'"
)


@dataclasses.dataclass(frozen=True)
class _Step:
    text: str
    verb: str
    kind: str = ""
    args: tuple[str, ...] = ()
    count: int | None = None


def _split(rest: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in rest.split(",") if p.strip())


def _parse(text: str) -> _Step:
    if not isinstance(text, str):
        raise UsageError(f"a timeline step is a string like 'call NAME', got {text!r}")
    verb, _, rest = text.strip().partition(" ")
    rest = rest.strip()
    if verb in ("call", "error") and rest:
        return _Step(text, verb, args=(rest,))
    if verb in ("injected", "removed") and rest:
        return _Step(text, verb, args=_split(rest))
    if verb == "answer":
        return _Step(text, verb, args=(rest,) if rest else ())
    if verb == "offered" and rest:
        kind, _, names = rest.partition(" ")
        if kind.isdigit() and not names:
            return _Step(text, verb, kind="count", count=int(kind))
        if kind in _OFFERED_KINDS and _split(names):
            return _Step(text, verb, kind=kind, args=_split(names))
    raise UsageError(f"cannot read timeline step {text!r}; write one of {_FORMS}")


class _Cursor:
    """Position in the run: the next call is ``calls[j]`` of iteration ``i`` (0-based)."""

    def __init__(self, trace: Trace) -> None:
        self.its: list[IterationRecord] = trace.iterations
        self.initial = trace.initial_tools
        self.i = 0
        self.j = 0

    def next_call(self) -> tuple[int, int] | None:
        i, j = self.i, self.j
        while i < len(self.its) and j >= len(self.its[i].calls):
            i, j = i + 1, 0
        return (i, j) if i < len(self.its) else None

    def next_request(self) -> int | None:
        """Index of the request the next 'offered'/'answer' step talks about."""
        if self.j == 0:
            return self.i
        if self.j >= len(self.its[self.i].calls):
            return self.i + 1
        return None  # in the middle of a turn


def _describe(it: IterationRecord | None) -> str:
    if it is None:
        return "the run ended"
    if it.calls:
        return f"calls={[c.name for c in it.calls]}"
    if it.finish_reason is not None:
        return f"the final answer {(it.answer or '')[:60]!r}"
    return "a request with no response"


class _Timeline(Expectation):
    def __init__(self, steps: Sequence[Any]) -> None:
        if isinstance(steps, str) or not isinstance(steps, Sequence):
            raise UsageError(f"timeline() takes a list of steps, got {steps!r}")
        self.per_iteration: list[TimelineStep] | None = None
        self.steps: list[_Step] = []
        if steps and all(isinstance(s, (Mapping, TimelineStep)) for s in steps):
            try:
                self.per_iteration = [
                    s if isinstance(s, TimelineStep) else TimelineStep.model_validate(s)
                    for s in steps
                ]
            except ValidationError as exc:
                raise UsageError(f"bad per-iteration timeline step: {exc}") from None
        else:
            self.steps = [_parse(s) for s in steps]
            for step in self.steps[:-1]:
                if step.verb == "answer":
                    raise UsageError(f"'answer' must be the last timeline step, got {steps!r}")

    @property
    def description(self) -> str:
        if self.per_iteration is not None:
            return f"timeline of {len(self.per_iteration)} iterations"
        return "timeline [" + ", ".join(repr(s.text) for s in self.steps) + "]"

    def evaluate(self, trace: Trace) -> Failure | None:
        if self.per_iteration is not None:
            divergence = check_timeline(self.per_iteration, timeline_rows(trace))
            if divergence is None:
                return None
            return Failure(
                problem=str(divergence),
                iteration=divergence.iteration,
                expected=divergence.expected,
            )
        cursor = _Cursor(trace)
        for step in self.steps:
            failure = _apply(step, cursor)
            if failure is not None:
                return failure
        rest = cursor.next_call()
        if rest is not None:
            it = cursor.its[rest[0]]
            return Failure(
                problem=f"the run made more calls than listed: next was "
                f"{it.calls[rest[1]].name!r} at iteration {it.index}",
                iteration=it.index,
                expected="no more calls",
            )
        return None


def _apply(step: _Step, cursor: _Cursor) -> Failure | None:
    its = cursor.its
    if step.verb in ("call", "error"):
        position = cursor.next_call()
        if position is None:
            last = its[-1] if its else None
            return Failure(
                problem=f"expected {step.text!r}, but there are no more calls ({_describe(last)})",
                iteration=len(its) + 1 if last is None or last.calls else last.index,
                expected=step.text,
            )
        i, j = position
        record = its[i].calls[j]
        bad = not fnmatch.fnmatchcase(record.name, step.args[0])
        if step.verb == "error" and not record.is_error:
            bad = True
        if bad:
            state = " (it failed)" if record.is_error else ""
            return Failure(
                problem=f"expected {step.text!r}, got call {record.name!r}{state} "
                f"at iteration {its[i].index}",
                iteration=its[i].index,
                expected=step.text,
            )
        cursor.i, cursor.j = i, j + 1
        return None
    if step.verb in ("injected", "removed"):
        current = cursor.i if cursor.j > 0 else cursor.i - 1
        names: list[str] = []
        for index in (current, current + 1):
            if 0 <= index < len(its):
                for change in its[index].changes:
                    if change.initial:
                        continue  # the toolset the run starts with, not an injection
                    if index == current or change.after_call is None:
                        names.extend(change.added if step.verb == "injected" else change.removed)
        for pattern in step.args:
            if not matching(pattern, names):
                where = its[current].index if 0 <= current < len(its) else 1
                return Failure(
                    problem=f"expected {step.text!r}; {step.verb} here: {names}",
                    iteration=where,
                    expected=step.text,
                )
        return None
    target = cursor.next_request()
    if target is None:
        it = its[cursor.i]
        return Failure(
            problem=f"expected {step.text!r} on a new request, but the turn at iteration "
            f"{it.index} made another call {it.calls[cursor.j].name!r}",
            iteration=it.index,
            expected=step.text,
        )
    if target >= len(its):
        return Failure(
            problem=f"expected {step.text!r}, but the run ended after {len(its)} iterations",
            iteration=len(its) + 1,
            expected=step.text,
        )
    it = its[target]
    cursor.i, cursor.j = target, 0
    if step.verb == "answer":
        final = not it.calls and it.finish_reason is not None
        if not final or (step.args and step.args[0] not in (it.answer or "")):
            return Failure(
                problem=f"expected {step.text!r}, got {_describe(it)} at iteration {it.index}",
                iteration=it.index,
                expected=step.text,
            )
        return None
    return _check_offered(step, it, its[target - 1].offered if target > 0 else cursor.initial)


def _check_offered(step: _Step, it: IterationRecord, before: Sequence[str]) -> Failure | None:
    offered = it.offered

    def fail(detail: str) -> Failure:
        return Failure(
            problem=f"expected {step.text!r} at iteration {it.index}: {detail}",
            iteration=it.index,
            expected=step.text,
        )

    if step.kind == "count":
        return None if len(offered) == step.count else fail(f"{len(offered)} offered")
    if step.kind == "exactly":
        missing = [p for p in step.args if not matching(p, offered)]
        extra = [n for n in offered if not any(fnmatch.fnmatchcase(n, p) for p in step.args)]
        return fail(f"missing {missing}, unexpected {extra}") if missing or extra else None
    gained = [n for n in offered if n not in before]
    lost = [n for n in before if n not in offered]
    for pattern in step.args:
        if step.kind == "includes" and not matching(pattern, offered):
            return fail(f"offered {list(offered)}")
        if step.kind == "excludes" and matching(pattern, offered):
            return fail(f"offered {matching(pattern, offered)}")
        if step.kind == "gains" and not matching(pattern, gained):
            return fail(f"gained {gained}")
        if step.kind == "loses" and not matching(pattern, lost):
            return fail(f"lost {lost}")
    return None


def timeline(steps: Sequence[str] | Sequence[Mapping[str, Any] | TimelineStep]) -> Expectation:
    """The run unfolds as ``steps`` (see the module docs for the step forms)."""
    return _Timeline(steps)


def expect_timeline(
    subject: Any, steps: Sequence[str] | Sequence[Mapping[str, Any] | TimelineStep]
) -> Verdict:
    """Check ``subject``'s run against ``steps``; truthy when it unfolds that way.

    ``assert expect_timeline(result, ["call search_customer", "offered gains customer_*",
    "call customer_*_get_average_spend", "answer"])``
    """
    return for_assert(_Timeline(steps).check(subject))
