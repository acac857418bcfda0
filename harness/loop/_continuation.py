"""Continuation: turns that do not end the loop, and user nudges between requests.

By default a model turn without tool calls is the answer and ends the run (the user
turn). Real agents differ: a ReAct agent asks for a "Thought:" text under
``tool_choice: none`` and then for the action; a framework pushes "give your final
answer" until a final-answer tool is called; crewAI adds a user message after every tool
result. A ``Continuation`` (``LoopOptions.continuation``) decides both:

- ``after_answer(context)``: the text answer just received ends the turn (``None`` or
  ``False``), or the loop goes on (``True``, or the text of a user message to append
  first, e.g. "Now act.");
- ``after_results(context)``: the text of a user message to append after a turn's tool
  results, before the next request (``None``: none).

The ready-made policies: ``ReAct`` (a text answered under ``tool_choice: none`` is a
thought), ``ContinueUntilTool`` (until a tool matching a name or glob was called in the
turn), ``ContinueWhile`` (a predicate), ``NudgeAfterResults`` (a fixed user message after
tool results). A list of policies asks each in turn; the first that decides wins. The
loop's ``max_iterations`` still bounds every user turn. A continued answer is marked in
the trace (``IterationRecord.continued``).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness._errors import HarnessError, StrategyError, UsageError
from harness.messages import AssistantMessage, Message, ToolMessage, UserMessage
from harness.tools._definitions import ToolChoice

__all__ = [
    "Continuation",
    "ContinuationContext",
    "ContinueUntilTool",
    "ContinueWhile",
    "NudgeAfterResults",
    "ReAct",
    "continuation_of",
]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ContinuationContext:
    """What a continuation policy reads (read-only)."""

    history: Sequence[Message]
    """The message history so far (the answer included)."""
    answer: AssistantMessage | None
    """The text answer just received (``None`` in ``after_results``)."""
    tool_choice: ToolChoice | None
    """The tool choice of the request that was answered."""
    iteration: int
    """The session's iteration (1-based)."""
    turn: int
    """The user turn (1-based)."""
    turn_iteration: int
    """The iteration within the user turn (1-based)."""
    called: Mapping[str, int]
    """How many times each tool was called successfully in this user turn."""
    continued: int
    """How many answers of this user turn were already continued."""
    state: dict[str, Any]
    """The run's blackboard."""


Decision = bool | str | None
"""``None``/``False``: the answer stands; ``True``: go on; a string: go on after this user
message."""


class Continuation:
    """Base of continuation policies: override one or both hooks."""

    @property
    def name(self) -> str:
        """The policy's name in error messages."""
        return type(self).__name__

    def after_answer(self, context: ContinuationContext) -> Decision:
        """Whether the text answer in ``context.answer`` ends the turn (see the module)."""
        return None

    def after_results(self, context: ContinuationContext) -> str | None:
        """A user message to append after this turn's tool results, or ``None``."""
        return None


def _nudge(text: str | None, where: str) -> str | None:
    if text is not None and (not isinstance(text, str) or not text.strip()):
        raise UsageError(f"{where}: a nudge must be a non-empty string or None, got {text!r}")
    return text


class ReAct(Continuation):
    """Text, then action: an answer given under ``tool_choice: none`` is a thought and the
    loop goes on (pair it with ``ToolChoiceSchedule(["none", "required"])``); ``nudge`` is
    appended as a user message before the next request (e.g. "Now act.")."""

    def __init__(self, nudge: str | None = None) -> None:
        self.nudge = _nudge(nudge, "ReAct(nudge=...)")

    def after_answer(self, context: ContinuationContext) -> Decision:
        choice = context.tool_choice
        if choice is not None and choice.mode == "none":
            return self.nudge or True
        return None

    def __repr__(self) -> str:
        return f"ReAct(nudge={self.nudge!r})"


class ContinueUntilTool(Continuation):
    """A text answer does not end the turn until a tool matching ``pattern`` (a name or a
    glob) was called successfully in it; ``nudge`` is appended before the next request."""

    def __init__(self, pattern: str, *, nudge: str | None = None) -> None:
        if not isinstance(pattern, str) or not pattern:
            raise UsageError(f"ContinueUntilTool needs a tool name or glob, got {pattern!r}")
        self.pattern = pattern
        self.nudge = _nudge(nudge, "ContinueUntilTool(nudge=...)")

    def after_answer(self, context: ContinuationContext) -> Decision:
        if any(fnmatch.fnmatchcase(name, self.pattern) for name in context.called):
            return None
        return self.nudge or True

    def __repr__(self) -> str:
        return f"ContinueUntilTool({self.pattern!r}, nudge={self.nudge!r})"


class ContinueWhile(Continuation):
    """The loop goes on while ``predicate(context)`` is true (or a string: the user
    message to append before the next request)."""

    def __init__(self, predicate: Callable[[ContinuationContext], Decision]) -> None:
        if not callable(predicate):
            raise UsageError(
                f"ContinueWhile takes a function (ContinuationContext) -> bool | str, "
                f"got {predicate!r}"
            )
        self.predicate = predicate

    def after_answer(self, context: ContinuationContext) -> Decision:
        return self.predicate(context)

    def __repr__(self) -> str:
        return f"ContinueWhile({self.predicate!r})"


class NudgeAfterResults(Continuation):
    """After every model turn's tool results, the user says ``text`` (crewAI's "Analyze the
    tool result..."), before the next request. A list of texts gives them in order, the
    last one repeating."""

    def __init__(self, text: str | Sequence[str]) -> None:
        texts = [text] if isinstance(text, str) else list(text)
        if not texts:
            raise UsageError("NudgeAfterResults needs a text or a non-empty list of texts")
        self.texts = tuple(_nudge(t, "NudgeAfterResults(text)") or "" for t in texts)

    def after_results(self, context: ContinuationContext) -> str | None:
        history = context.history
        given = sum(  # nudges already given: user messages right after a tool result
            1
            for before, message in itertools.pairwise(history)
            if isinstance(message, UserMessage) and isinstance(before, ToolMessage)
        )
        return self.texts[min(given, len(self.texts) - 1)]

    def __repr__(self) -> str:
        shown = self.texts[0] if len(self.texts) == 1 else list(self.texts)
        return f"NudgeAfterResults({shown!r})"


class _Chain(Continuation):
    """Several policies; the first that decides wins."""

    def __init__(self, policies: Sequence[Continuation]) -> None:
        self.policies = tuple(policies)

    def after_answer(self, context: ContinuationContext) -> Decision:
        for policy in self.policies:
            decision: Decision = _ask(policy, "after_answer", context)
            if decision:
                return decision
        return None

    def after_results(self, context: ContinuationContext) -> str | None:
        for policy in self.policies:
            text = _ask(policy, "after_results", context)
            if text:
                return str(text)
        return None


def _ask(policy: Continuation, hook: str, context: ContinuationContext) -> Any:
    where = f"continuation {policy.name!r} in {hook} at iteration {context.iteration}"
    try:
        got = getattr(policy, hook)(context)
    except HarnessError:
        raise
    except Exception as exc:
        raise StrategyError(f"{where} raised {type(exc).__name__}: {exc}") from exc
    if got is None or isinstance(got, (bool, str)):
        if isinstance(got, str) and not got.strip():
            raise StrategyError(f"{where} returned an empty nudge; return True or None instead")
        return got
    raise StrategyError(f"{where} returned {got!r}; return None, a bool or a user message")


def continuation_of(value: Any) -> Continuation | None:
    """``LoopOptions.continuation`` as one policy: ``None``, a ``Continuation`` or a list
    of them (asked in order); anything else is a ``UsageError``."""
    if value is None or isinstance(value, _Chain):
        return value
    if isinstance(value, Continuation):
        return _Chain((value,))
    if isinstance(value, (list, tuple)) and all(isinstance(v, Continuation) for v in value):
        return _Chain(value) if value else None
    raise UsageError(
        "continuation must be a harness.Continuation (ReAct(), ContinueUntilTool(name), "
        f"ContinueWhile(predicate), NudgeAfterResults(text)) or a list of them, got {value!r}"
    )
