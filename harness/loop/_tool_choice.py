"""Per-request ``tool_choice``: decided by strategies, checked against the offered tools.

One mechanism for every strategy that steers what the model may call on a request: a
strategy overrides ``InjectionStrategy.tool_choice(context)`` and returns a
``ToolChoice`` (or ``auto`` / ``none`` / ``required`` / a tool name), or ``None`` to leave
the decision to the next strategy. The first strategy of the chain that decides wins;
when none does, ``LoopOptions.tool_choice`` applies. The loop checks the choice against
the tools offered on that request (a named tool or an allowed subset must be offered),
sends it in ``ModelSettings.tool_choice`` and records it in the trace
(``IterationRecord.tool_choice``).

``ToolChoiceSchedule`` is the ready-made strategy: a list of choices by request within
the user turn (ReAct's ``["none", "required"]``, a forced first tool then ``auto``), or
a function of the ``InjectionContext``. ``choice_violation`` says whether a response
obeys a choice: the scripted model and the wire fakes honour ``tool_choice`` with it as
the providers do (``none`` forbids calls, ``required`` forbids plain text, a named tool
forces that tool, an allowed subset forbids the others).
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from harness._errors import HarnessError, StrategyError, UsageError
from harness._names import format_names
from harness.loop._model import ModelSettings
from harness.loop._strategy import InjectionContext, InjectionStrategy
from harness.messages import AssistantMessage
from harness.tools._definitions import ToolChoice

__all__ = [
    "ChoiceLike",
    "ToolChoiceSchedule",
    "choice_violation",
    "decide_tool_choice",
    "permitted",
    "request_settings",
    "show_choice",
]

ChoiceLike = ToolChoice | str | Mapping[str, Any] | None
"""What a strategy may return: a ``ToolChoice``, a word or tool name, or ``None``."""

_GLOB = frozenset("*?[")


def _read(value: ChoiceLike, where: str) -> ToolChoice | None:
    try:
        return ToolChoice.of(value)
    except UsageError as exc:
        raise StrategyError(f"{where} returned an invalid tool_choice: {exc}") from None


def decide_tool_choice(
    strategies: Sequence[InjectionStrategy], context: InjectionContext
) -> tuple[ToolChoice | None, str | None]:
    """The first choice a strategy makes for this request, and that strategy's name
    (``(None, None)`` when none decides). An exception in a hook is a ``StrategyError``."""
    for strategy in strategies:
        where = f"strategy {strategy.name!r} in tool_choice at iteration {context.iteration}"
        try:
            got = strategy.tool_choice(context)
        except HarnessError:
            raise
        except Exception as exc:
            raise StrategyError(f"{where} raised {type(exc).__name__}: {exc}") from exc
        choice = _read(got, where)
        if choice is not None:
            return choice, strategy.name
    return None, None


def _unoffered(choice: ToolChoice, offered: Sequence[str]) -> list[str]:
    names = [choice.name] if choice.name is not None else list(choice.allowed or ())
    known = set(offered)
    return [n for n in names if n not in known]


def request_settings(
    base: ModelSettings,
    strategies: Sequence[InjectionStrategy],
    context: InjectionContext,
) -> ModelSettings:
    """``base`` with this request's tool choice: a strategy's (checked against the tools
    offered now), else ``base``'s own (``LoopOptions.tool_choice``)."""
    choice, by = decide_tool_choice(strategies, context)
    if choice is None or choice == base.tool_choice:
        return base
    missing = _unoffered(choice, context.offered)
    if missing:
        raise StrategyError(
            f"strategy {by!r} chose tool_choice {show_choice(choice)} for the request of iteration "
            f"{context.iteration} (turn {context.turn}), naming {format_names(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not offered (offered: "
            f"{format_names(context.offered) if context.offered else 'no tools'}); name an "
            "offered tool, or choose 'required' or 'auto'"
        )
    return dataclasses.replace(base, tool_choice=choice)


def show_choice(choice: ToolChoice | None) -> str:
    """A choice in words, for messages: ``'none'``, ``tool 'search'``, ``allowed [...]``."""
    if choice is None:
        return "no tool_choice (the provider's default)"
    if choice.mode == "tool":
        return f"tool {choice.name!r}"
    if choice.allowed is not None:
        return f"allowed [{format_names(choice.allowed)}] ({choice.mode})"
    return repr(choice.mode)


def permitted(choice: ToolChoice | None, names: Sequence[str]) -> tuple[str, ...]:
    """The names among ``names`` that ``choice`` lets a model call: none under ``none``,
    the forced tool under a named choice, the subset under ``allowed``, else all of them
    (the one reading of the rules, for the fakes' checks and the fuzzer's model)."""
    if choice is None:
        return tuple(names)
    if choice.mode == "none":
        return ()
    if choice.mode == "tool":
        return tuple(n for n in names if n == choice.name)
    if choice.allowed is not None:
        return tuple(n for n in names if n in choice.allowed)
    return tuple(names)


def choice_violation(choice: ToolChoice | None, message: AssistantMessage) -> str | None:
    """Why ``message`` breaks ``choice`` as no provider's model could (``None``: it obeys)."""
    if choice is None:
        return None
    names = [call.name for call in message.tool_calls]
    allowed = set(permitted(choice, names))
    outside = [n for n in names if n not in allowed]
    if choice.mode == "none" and names:
        return f"tool_choice 'none' forbids tool calls, got a call of {format_names(names)}"
    if choice.mode == "required" and not names:
        return "tool_choice 'required' forbids a plain text answer: the model must call a tool"
    if choice.mode == "tool" and choice.name is not None:
        if not names:
            return f"tool_choice forces {choice.name!r}: the model must call it, not answer"
        if outside:
            return f"tool_choice forces {choice.name!r}, got a call of {format_names(outside)}"
    if choice.allowed is not None and outside:
        return (
            f"tool_choice allows only {format_names(choice.allowed)}, got a call of "
            f"{format_names(outside)}"
        )
    return None


Schedule = Sequence[ChoiceLike] | Callable[[InjectionContext], ChoiceLike]


class ToolChoiceSchedule(InjectionStrategy):
    """``tool_choice`` per request: a schedule by request within the user turn, or a
    function of the ``InjectionContext``.

    ``ToolChoiceSchedule(["none", "required"], then="repeat")`` is ReAct's "a thought, then
    an action" on every pair of requests; ``ToolChoiceSchedule(["get_weather",
    "get_forecast", "auto"])`` forces two tools, then lets the model answer. A tool name
    may be a glob, resolved against the tools offered on that request. ``then`` says what
    follows the list: ``"last"`` (its last entry again, the default), ``"repeat"`` (the list
    from the start) or ``"default"`` (``LoopOptions.tool_choice``). The schedule restarts at
    each user turn of a session (``InjectionContext.turn_iteration``).
    """

    def __init__(
        self,
        schedule: Schedule,
        *,
        then: Literal["last", "repeat", "default"] = "last",
    ) -> None:
        if then not in ("last", "repeat", "default"):
            raise UsageError(
                f"ToolChoiceSchedule(then=...) must be 'last', 'repeat' or 'default', got {then!r}"
            )
        self.then = then
        self.function: Callable[[InjectionContext], ChoiceLike] | None = None
        self.schedule: tuple[ChoiceLike, ...] = ()
        if callable(schedule):
            self.function = schedule
            return
        if isinstance(schedule, (str, bytes, Mapping)) or not isinstance(schedule, Sequence):
            raise UsageError(
                "ToolChoiceSchedule takes a list of choices (e.g. ['none', 'required']) or a "
                f"function (InjectionContext) -> choice, got {schedule!r}"
            )
        if not schedule:
            raise UsageError("ToolChoiceSchedule needs at least one choice, got []")
        for index, entry in enumerate(schedule):
            if isinstance(entry, str) and _GLOB.intersection(entry):
                continue  # a glob: resolved per request
            try:
                ToolChoice.of(entry)
            except UsageError as exc:
                raise UsageError(f"ToolChoiceSchedule entry {index + 1}: {exc}") from None
        self.schedule = tuple(schedule)

    @property
    def name(self) -> str:
        """``tool_choice_schedule`` in the trace."""
        return "tool_choice_schedule"

    def _entry(self, position: int) -> ChoiceLike:
        count = len(self.schedule)
        if position < count:
            return self.schedule[position]
        if self.then == "repeat":
            return self.schedule[position % count]
        return self.schedule[-1] if self.then == "last" else None

    def tool_choice(self, context: InjectionContext) -> ChoiceLike:
        if self.function is not None:
            return self.function(context)
        entry = self._entry(context.turn_iteration - 1)
        if isinstance(entry, str) and _GLOB.intersection(entry):
            found = [n for n in context.offered if fnmatch.fnmatchcase(n, entry)]
            if len(found) != 1:
                raise StrategyError(
                    f"tool_choice schedule entry {entry!r} for request {context.turn_iteration} "
                    f"of turn {context.turn} matches "
                    f"{format_names(found) if found else 'no offered tool'}; it must match "
                    f"exactly one (offered: {format_names(context.offered) or 'no tools'})"
                )
            return found[0]
        return entry

    def __repr__(self) -> str:
        shown = self.function if self.function is not None else list(self.schedule)
        return f"ToolChoiceSchedule({shown!r}, then={self.then!r})"
