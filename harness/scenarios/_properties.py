"""Properties of a whole run: functions that raise ``AssertionError`` when the run misbehaved.

A property is judged on every run, finished or not: a run that ended in an error
(``MaxIterationsExceeded``, a provider error, a strategy that crashed) is passed as an
``AgentRun`` whose ``error`` is set, with the trace, messages and shared ``state`` the
error carried. A finished run is an ``AgentRun`` too (``error`` is ``None``), so one
property reads both the same way.
"""

from __future__ import annotations

import dataclasses
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from harness._errors import HarnessError, UsageError
from harness._secrets import scrub_message
from harness.loop import RunResult, Trace, Usage
from harness.scenarios._agent import describe_factory

__all__ = ["AgentRun", "Finding", "Property", "WireRun", "check_properties"]

Property = Callable[[RunResult], None]
"""``(run) -> None``, raising ``AssertionError`` when the run misbehaved."""


@dataclasses.dataclass(frozen=True, kw_only=True, repr=False)
class AgentRun(RunResult):
    """A run as properties see it: a ``RunResult`` plus how it ended.

    For a run that raised, ``output`` is ``None`` and ``trace``, ``messages`` and
    ``state`` are those the error carried (``HarnessError.trace``/``messages``/``state``).
    """

    error: BaseException | None = None
    """The exception the run ended with; ``None`` when it finished."""

    @property
    def finished(self) -> bool:
        """The run ended with an answer (no error)."""
        return self.error is None

    @classmethod
    def from_result(cls, result: RunResult) -> AgentRun:
        """The view of a finished run."""
        fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(RunResult)}
        return cls(**fields)

    @classmethod
    def from_error(cls, error: BaseException) -> AgentRun:
        """The view of a run that raised ``error`` (its trace, messages and state)."""
        if isinstance(error, HarnessError):
            trace, messages, state = error.trace, error.messages, error.state
        else:
            trace = getattr(error, "harness_trace", None)
            messages = getattr(error, "harness_messages", None)
            state = getattr(error, "harness_state", None)
        trace = trace if isinstance(trace, Trace) else Trace()
        return cls(
            output=None,
            messages=list(messages or []),
            iterations=len(trace.iterations),
            tools_injected=list(trace.injected),
            trace=trace,
            usage=Usage(),
            state=state if isinstance(state, dict) else {},
            error=error,
        )

    def __repr__(self) -> str:
        ending = f"error={type(self.error).__name__}" if self.error else "finished"
        return f"AgentRun({ending}, iterations={self.iterations}, output={self.output!r:.60})"


@dataclasses.dataclass(frozen=True, kw_only=True, repr=False)
class WireRun(AgentRun):
    """A run of an agent on another framework, seen on the wire (``fuzz_agent(...,
    wire=...)``, a scenario file with ``wire:``): ``trace`` is the wire trace (tools
    offered per request, calls, results, injections between requests), ``output`` what
    the factory's ``run`` returned, ``state`` the object the factory gave, ``error`` what
    ``run`` raised (the framework's own failures included), ``messages`` the last
    request's history and the last answer."""

    state: Any = None
    """The factory's ``state``: any object (``None`` when it gave none)."""
    wire: str = ""
    """The wire format the agent called (``openai-chat``, ``openai-responses``,
    ``anthropic``)."""

    def __repr__(self) -> str:
        ending = f"error={type(self.error).__name__}" if self.error else "finished"
        return (
            f"WireRun({self.wire}, {ending}, requests={self.iterations}, "
            f"output={self.output!r:.60})"
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Finding:
    """Why a run failed: a property (``module:qualname``), ``invariant:<name>``, ``crash``
    or ``hang``; ``message`` is what went wrong (a property's ``AssertionError`` text, or
    where it was raised when it said nothing)."""

    name: str
    message: str

    def __str__(self) -> str:
        return f"[{self.name}] {self.message}"


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "assertion failed"
    last = frames[-1]
    line = f": {last.line}" if last.line else ""
    return f"assertion failed at {last.filename}:{last.lineno}{line}"


def check_properties(
    run: AgentRun, properties: Iterable[Property], *, hidden: Iterable[Any] = ()
) -> Finding | None:
    """The first property that fails on ``run``, or ``None``.

    A property raising anything but ``AssertionError`` is a mistake in the property,
    not a finding: ``UsageError`` naming it and what it raised (chained). Both messages
    come from user code: every registered secret and each of ``hidden`` (the agent's
    preset and context values) is scrubbed from them, as from a tool's error.
    """
    hidden = list(hidden)
    for prop in properties:
        name = describe_factory(prop)
        try:
            prop(run)
        except AssertionError as exc:
            text = str(exc).strip()
            return Finding(name=name, message=scrub_message(text or _where(exc), hidden))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # SystemExit, GeneratorExit, a BaseException of its own
            raise UsageError(
                scrub_message(
                    f"property {name} raised {type(exc).__name__}: {exc} (on a run that "
                    f"{'finished' if run.finished else 'ended with ' + type(run.error).__name__}"
                    "); a property reports a misbehaving run with assert / AssertionError: fix "
                    "the property or catch what it expects",
                    hidden,
                )
            ) from exc
    return None


def property_names(properties: Sequence[Any]) -> list[str]:
    """``module:qualname`` of each property."""
    return [describe_factory(p) for p in properties]
