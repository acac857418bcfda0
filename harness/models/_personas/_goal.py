"""The goal-directed persona: works its way towards a target tool, then answers."""

from __future__ import annotations

import fnmatch
import random
import re
from collections.abc import Sequence

from harness._errors import UsageError
from harness._validation import int_problem
from harness.loop import ModelRequest
from harness.models._personas._base import ArgumentOverrides, Persona, Plan
from harness.models._personas._state import RunState
from harness.models._personas._weak import WeakBehavior

__all__ = ["DEFAULT_HINTS", "GoalDirected"]

DEFAULT_HINTS: tuple[str, ...] = (
    "find",
    "search",
    "discover",
    "list",
    "lookup",
    "open",
    "load",
    "browse",
    "expand",
    "tools",
    "get",
)
"""Name fragments of tools that usually lead somewhere (facades, discovery, lookups)."""

_GLOB = frozenset("*?[")


def _tokens(text: str) -> set[str]:
    return {t for t in re.split(r"[^a-z0-9]+", text.lower()) if t}


class GoalDirected(Persona):
    """Calls whatever offered tool moves it closer to a ``target`` (a name or glob).

    Each turn: if a tool matching ``target`` is offered, call it; once it was
    called, answer. Otherwise call a tool not called yet, preferring names that
    share words with the target and names matching ``hints`` (facades,
    discovery and lookup tools); when none is left, call again a tool whose
    result injected tools before. After ``max_steps`` turns without reaching the
    target it gives up with a text answer. Ties are broken by the seed.
    """

    def __init__(
        self,
        target: str,
        *,
        seed: int = 0,
        hints: Sequence[str] = DEFAULT_HINTS,
        max_steps: int = 10,
        weak: WeakBehavior | None = None,
        arguments: ArgumentOverrides | None = None,
        name: str = "goal-directed",
    ) -> None:
        problems = []
        if not isinstance(target, str) or not target.strip():
            problems.append(
                f"target must be a tool name or glob like 'customer_*_get_spend', got {target!r}"
            )
        if isinstance(hints, str) or not all(isinstance(h, str) and h for h in hints):
            problems.append(f"hints must be a list of non-empty strings, got {hints!r}")
        if (problem := int_problem(max_steps, name="max_steps", minimum=1)) is not None:
            problems.append(problem)
        if problems:
            raise UsageError("GoalDirected: " + "; ".join(problems))
        super().__init__(seed=seed, weak=weak, arguments=arguments, name=name)
        self.target = target
        self.hints = tuple(hints)
        self.max_steps = max_steps
        self._target_words = _tokens(target.replace("*", " "))

    def _is_target(self, name: str) -> bool:
        return fnmatch.fnmatchcase(name, self.target)

    def _hinted(self, name: str) -> bool:
        lowered = name.lower()
        for hint in self.hints:
            if _GLOB.intersection(hint):
                if fnmatch.fnmatchcase(lowered, hint.lower()):
                    return True
            elif hint.lower() in _tokens(lowered) or lowered.startswith(hint.lower()):
                return True
        return False

    def _score(self, name: str, state: RunState) -> int:
        score = 2 * len(self._target_words & _tokens(name))
        if self._hinted(name):
            score += 3
        if state.injected_by.get(name):
            score += 1
        return score

    def plan(self, request: ModelRequest, state: RunState, rng: random.Random) -> Plan:
        reached = [n for n in state.called if self._is_target(n)]
        if reached:
            result = state.results.get(reached[-1])
            text = self.answer_text(request, state)
            if result is not None and request.settings.output_schema is None:
                text = f"{reached[-1]} returned: {result}"
            return Plan(action="answer", reason=f"target {reached[-1]!r} was called", text=text)
        if state.turns >= self.max_steps:
            return Plan(
                action="give_up",
                reason=f"target {self.target!r} not reached in max_steps={self.max_steps}",
                text=f"I could not find a way to use {self.target}.",
            )
        targets = [n for n in state.offered if self._is_target(n)]
        if targets:
            chosen = rng.choice(targets)
            return Plan(action="call", reason=f"target {chosen!r} is offered", calls=(chosen,))
        fresh = [n for n in state.offered if n not in state.called]
        reason = "never called"
        if not fresh:
            fresh = [n for n in state.offered if state.injected_by.get(n)]
            reason = "injected tools before"
        if not fresh:
            return Plan(
                action="give_up",
                reason=f"no offered tool leads to {self.target!r}",
                text=f"I could not find a way to use {self.target}.",
            )
        scores = {n: self._score(n, state) for n in fresh}
        best = max(scores.values())
        chosen = rng.choice([n for n in fresh if scores[n] == best])
        return Plan(
            action="call",
            reason=f"{chosen!r} {reason}, score {best} towards {self.target!r}",
            calls=(chosen,),
        )
