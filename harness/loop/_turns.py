"""User turns of one loop: the per-turn bookkeeping the core keeps for sessions.

A ``LoopCore`` runs one user turn at a time: ``begin_turn`` (phase ``finished`` ->
``ready``) adds the next user message to the same history, toolset, strategies and
blackboard. ``TurnControl`` keeps what belongs to the current turn (its number, where
its iterations start, what was called and how many answers were continued in it), asks
the strategies for each request's ``tool_choice`` (harness/loop/_tool_choice.py) and the
continuation policy for its verdict on a text answer (harness/loop/_continuation.py). It
reads the run through a ``RunView`` (harness/loop/_run_view.py).
"""

from __future__ import annotations

from collections.abc import Callable

from harness._errors import UsageError
from harness.loop._continuation import ContinuationContext, continuation_of
from harness.loop._model import ModelSettings, Usage
from harness.loop._options import LoopOptions
from harness.loop._run_view import RunView
from harness.loop._strategy import (
    InjectionContext,
    InjectionStrategy,
    StrategyChain,
    hook_strategies,
)
from harness.loop._tool_choice import request_settings
from harness.messages import AssistantMessage, UserMessage
from harness.tools._definitions import ToolChoice

__all__ = ["TurnControl", "leaf_strategies"]


def leaf_strategies(strategy: InjectionStrategy) -> list[InjectionStrategy]:
    """The strategies of a chain, nested chains flattened."""
    if isinstance(strategy, StrategyChain):
        return [leaf for inner in strategy.strategies for leaf in leaf_strategies(inner)]
    return [strategy]


class TurnControl:
    """The current user turn of a core, its tool choices and its continuation policy."""

    __slots__ = (
        "called_before",
        "choice",
        "choosers",
        "continued",
        "injected_start",
        "policy",
        "resetting",
        "start",
        "turn",
        "usage_start",
    )

    def __init__(self, options: LoopOptions, strategy: InjectionStrategy) -> None:
        self.turn = 1
        """The user turn (1-based)."""
        self.start = 0
        """Iterations made before this turn."""
        self.called_before: dict[str, int] = {}
        """Successful calls per tool name before this turn (``LoopCore.called`` then)."""
        self.continued = 0
        """Answers of this turn that did not end it."""
        self.injected_start = 0
        self.usage_start = Usage()
        self.choice = ToolChoice.of(options.tool_choice)
        """The tool choice of the last request built."""
        self.policy = continuation_of(options.continuation)
        self.choosers = hook_strategies(strategy, "tool_choice")
        self.resetting = tuple(s for s in leaf_strategies(strategy) if _resets_per_turn(s))

    def called_in_turn(self, called: dict[str, int]) -> dict[str, int]:
        """Successful calls per tool name in this turn, from the run's counts."""
        before = self.called_before
        return {n: c - before.get(n, 0) for n, c in called.items() if c > before.get(n, 0)}

    def iteration(self, iteration: int) -> int:
        """``iteration`` counted within this turn (1-based)."""
        return iteration - self.start

    def settings(
        self, base: ModelSettings, context: Callable[[], InjectionContext]
    ) -> ModelSettings:
        """The next request's settings: ``base`` with the strategies' tool choice."""
        settings = request_settings(base, self.choosers, context()) if self.choosers else base
        self.choice = settings.tool_choice
        return settings

    def _context(self, run: RunView, answer: AssistantMessage | None) -> ContinuationContext:
        return ContinuationContext(
            history=tuple(run.messages),
            answer=answer,
            tool_choice=self.choice,
            iteration=run.iteration,
            turn=self.turn,
            turn_iteration=self.iteration(run.iteration),
            called=self.called_in_turn(run.called),
            continued=self.continued,
            state=run.state,
        )

    def continuation(self, run: RunView, answer: AssistantMessage) -> str | None:
        """The continuation policy's verdict on a text answer: ``None`` when the answer may
        end the turn; otherwise the user message to send before the turn goes on (``""``:
        none). The core's after-answer decision (``LoopCore._after_answer``) asks it."""
        if self.policy is None:
            return None
        decision = self.policy.after_answer(self._context(run, answer))
        if not decision:
            return None
        self.continued += 1
        return decision if isinstance(decision, str) else ""

    def after_results(self, run: RunView) -> None:
        """Append the policy's user message after a turn's tool results, if it has one."""
        if self.policy is not None:
            text = self.policy.after_results(self._context(run, None))
            if text:
                run.messages.append(UserMessage(content=text))

    def next_turn(self, run: RunView) -> None:
        """Start the next user turn: its counters restart (the core drops the ``state_for``
        storage of the strategies in ``resetting``)."""
        self.turn += 1
        self.start = run.iteration
        self.called_before = dict(run.called)
        self.continued = 0
        self.injected_start = len(run.injected)
        self.usage_start = run.usage


def _resets_per_turn(strategy: InjectionStrategy) -> bool:
    """The strategy's ``resets_per_turn``, or ``UsageError`` naming it when reading it
    raises or gives no bool (read once, when the run or session is built)."""
    cls = type(strategy).__name__
    try:
        value = strategy.resets_per_turn
    except Exception as exc:
        raise UsageError(
            f"strategy {cls}: reading resets_per_turn raised {type(exc).__name__}: {exc}; it "
            "must be a bool (a class attribute, or a property that does not raise)"
        ) from exc
    if not isinstance(value, bool):
        raise UsageError(f"strategy {cls}: resets_per_turn must be a bool, got {value!r}")
    return value
