"""Expectations on counts: iterations, restarts, injected tools, events of a type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness._errors import UsageError
from harness._validation import is_int
from harness.assertions._labels import strategy_label
from harness.assertions._verdict import Expectation, Failure, in_turn
from harness.loop import Event, Trace

__all__ = ["has_events", "has_injections", "has_iterations", "has_restarts"]


def _bound(name: str, value: int | None) -> int | None:
    if value is not None and not is_int(value, minimum=0):
        raise UsageError(f"{name} must be a count >= 0, got {value!r}")
    return value


class _Count(Expectation):
    def __init__(
        self,
        what: str,
        measure: Callable[[Trace], int],
        exactly: int | None,
        at_least: int | None,
        at_most: int | None,
    ) -> None:
        self.what, self.measure = what, measure
        self.exactly = _bound("the count", exactly)
        self.at_least = _bound("at_least", at_least)
        self.at_most = _bound("at_most", at_most)
        if exactly is None and at_least is None and at_most is None:
            raise UsageError(f"give a count for {what}: a number, at_least= or at_most=")
        if exactly is not None and (at_least is not None or at_most is not None):
            raise UsageError("give either an exact count or at_least=/at_most=, not both")

    @property
    def description(self) -> str:
        if self.exactly is not None:
            return f"{self.exactly} {self.what}"
        bounds = []
        if self.at_least is not None:
            bounds.append(f"at least {self.at_least}")
        if self.at_most is not None:
            bounds.append(f"at most {self.at_most}")
        return f"{' and '.join(bounds)} {self.what}"

    def evaluate(self, trace: Trace) -> Failure | None:
        got = self.measure(trace)
        ok = (
            (self.exactly is None or got == self.exactly)
            and (self.at_least is None or got >= self.at_least)
            and (self.at_most is None or got <= self.at_most)
        )
        if ok:
            return None
        return Failure(problem=f"expected {self.description}, got {got}")


def has_iterations(
    count: int | None = None,
    *,
    at_least: int | None = None,
    at_most: int | None = None,
    turn: int | None = None,
) -> Expectation:
    """The run (``turn=``: that user turn of a session) made this many model requests."""
    return in_turn(_Count("iterations", len, count, at_least, at_most), turn)


def has_restarts(
    count: int | None = None, *, at_least: int | None = None, at_most: int | None = None
) -> Expectation:
    """The run restarted this many times (models without dynamic tools)."""
    return _Count("restarts", lambda t: t.restarts, count, at_least, at_most)


def has_injections(
    count: int | None = None,
    *,
    at_least: int | None = None,
    at_most: int | None = None,
    turn: int | None = None,
) -> Expectation:
    """This many tools were injected over the run (``turn=``: that user turn of a
    session; tool names, not change records)."""
    injections = _Count("injected tools", lambda t: len(t.injected), count, at_least, at_most)
    return in_turn(injections, turn)


def _event_filter(kind: type[Event] | str, fields: dict[str, Any]) -> Callable[[Event], bool]:
    def accepts(event: Event) -> bool:
        if isinstance(kind, str):
            if event.kind != kind:
                return False
        elif not isinstance(event, kind):
            return False
        for key, want in fields.items():
            got = getattr(event, key, None)
            if callable(want) and not isinstance(want, type):
                if not want(got):
                    return False
            elif got != want:
                return False
        return True

    return accepts


def has_events(
    kind: type[Event] | str,
    count: int | None = None,
    *,
    at_least: int | None = None,
    at_most: int | None = None,
    **fields: Any,
) -> Expectation:
    """Events of ``kind`` (a class such as ``ToolsInjected``, or its name) whose fields
    equal ``fields`` (values or predicates); default: at least one."""
    if not (isinstance(kind, str) or (isinstance(kind, type) and issubclass(kind, Event))):
        raise UsageError(f"has_events() takes an Event class or its name, got {kind!r}")
    if count is None and at_most is None and at_least is None:
        at_least = 1
    name = kind if isinstance(kind, str) else kind.__name__
    if isinstance(fields.get("strategy"), str):
        fields["strategy"] = strategy_label(fields["strategy"], "has_events(strategy=...)")
    accepts = _event_filter(kind, fields)
    label = f"{name} events" + (f" with {fields}" if fields else "")
    return _Count(label, lambda t: sum(1 for e in t.events if accepts(e)), count, at_least, at_most)
