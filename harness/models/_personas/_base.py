"""The persona base class: a seeded model that plans turns and records every decision."""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import random
from abc import abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

from harness._errors import UsageError
from harness._validation import int_problem
from harness.loop import FinishReason, Model, ModelRequest, ModelResponse
from harness.messages import ToolCall
from harness.models._personas._record import Decision, ReplayModel
from harness.models._personas._state import RunState
from harness.models._personas._values import SchemaValues
from harness.models._personas._weak import WeakBehavior

__all__ = ["ArgumentOverrides", "Persona", "Plan"]

ArgumentOverrides = Mapping[str, Mapping[str, Any] | Callable[[ModelRequest], Any]]
"""Tool name or glob -> fixed arguments, or a function of the request returning them."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Plan:
    """What a persona wants to do this turn, before weak behaviours spoil it."""

    action: str
    """``call``, ``answer`` or ``give_up``."""
    reason: str
    """Why, in words (kept in the decision record)."""
    calls: tuple[str, ...] = ()
    """Tool names to call (arguments are generated from their schemas)."""
    text: str | None = None
    """The answer text when not calling."""


class Persona(Model):
    """A model that simulates behaviour: deterministic for a ``seed``, every turn recorded.

    Subclasses implement ``plan``. The base class keeps the run's memory
    (``state``), generates schema-valid arguments (or uses ``arguments``
    overrides), applies the ``weak`` behaviours and appends a ``Decision`` to
    ``decisions``. A new run (iteration 1, or the first request after
    ``end_run``) starts again from the seed, so one persona gives the same trace
    on every run with the same tools. ``replayer()`` plays the decisions back.
    """

    __test__ = False

    def __init__(
        self,
        *,
        seed: int = 0,
        weak: WeakBehavior | None = None,
        arguments: ArgumentOverrides | None = None,
        name: str = "persona",
    ) -> None:
        problems = self._validate(seed=seed, weak=weak, arguments=arguments)
        if problems:
            raise UsageError(f"{type(self).__name__}: " + "; ".join(problems))
        self.seed = seed
        self.weak = weak or WeakBehavior()
        self.arguments: dict[str, Any] = dict(arguments or {})
        self.name = name
        self.decisions: list[Decision] = []
        """The decisions of the current (or last) run, in order."""
        self.requests: list[ModelRequest] = []
        """Every request of the current (or last) run."""
        self.state = RunState()
        """What the persona remembers about the current run."""
        self.values = SchemaValues()
        self._rng = random.Random(seed)
        self._weak_rng = random.Random(f"{seed}:weak")
        self._fresh = True
        self._counter = 0

    @staticmethod
    def _validate(*, seed: Any, weak: Any, arguments: Any) -> list[str]:
        problems = []
        if (problem := int_problem(seed, name="seed")) is not None:
            problems.append(problem)
        if weak is not None and not isinstance(weak, WeakBehavior):
            problems.append(
                f"weak must be a WeakBehavior(...) with rates, got {weak!r}; "
                "e.g. weak=WeakBehavior(invent_names=0.2)"
            )
        if arguments is not None and not isinstance(arguments, Mapping):
            problems.append(
                f"arguments must map tool names/globs to argument dicts, got {arguments!r}"
            )
        return problems

    # -- the run ----------------------------------------------------------------------

    def start_run(self) -> None:
        """Forget the previous run and restart the random streams from the seed."""
        self.decisions = []
        self.requests = []
        self.state = RunState()
        self._rng = random.Random(self.seed)
        self._weak_rng = random.Random(f"{self.seed}:weak")
        self._counter = 0
        self._fresh = False

    def end_run(self, *, completed: bool) -> None:
        self._fresh = True

    def request(self, request: ModelRequest) -> ModelResponse:
        if self._fresh or request.iteration == 1:
            self.start_run()
        self.requests.append(request)
        self.state.observe(request)
        plan = self.plan(request, self.state, self._rng)
        calls = [
            ToolCall(id=self._new_id(), name=n, arguments=self._arguments(n, request))
            for n in plan.calls
        ]
        quirks: tuple[str, ...] = ()
        action, reason, text = plan.action, plan.reason, plan.text
        if calls and self.weak.active:
            spoiled, quirks = self.weak.apply(
                calls, self.state, self._weak_rng, self.values, self._new_id
            )
            if spoiled is None:
                action, reason = "stop_early", f"stopped early instead of: {plan.reason}"
                text = self.answer_text(request, self.state, early=True)
                calls = []
            else:
                calls = spoiled
        finish: FinishReason = "tool_calls" if calls else "stop"
        decision = Decision(
            iteration=request.iteration,
            action=action,
            reason=reason,
            offered=tuple(request.tool_names),
            calls=tuple(calls),
            text=None if calls else (text if text is not None else ""),
            finish_reason=finish,
            quirks=quirks,
        )
        self.decisions.append(decision)
        self.state.sent(decision.calls)
        return decision.response(self.name)

    def replayer(self, *, check_offered: bool = True) -> ReplayModel:
        """A model that replays this run's decisions exactly."""
        return ReplayModel(list(self.decisions), check_offered=check_offered, name=self.name)

    # -- for subclasses ---------------------------------------------------------------

    @abstractmethod
    def plan(self, request: ModelRequest, state: RunState, rng: random.Random) -> Plan:
        """Decide this turn from the request and the run's memory (use only ``rng``)."""

    def answer_text(self, request: ModelRequest, state: RunState, *, early: bool = False) -> str:
        """The final answer: JSON from the output schema when the run asks for one."""
        schema = request.settings.output_schema
        if schema is not None:
            return json.dumps(self.values.generate(schema, self._rng))
        if early:
            return "I think I have enough to answer now."
        called = ", ".join(state.called) or "no tools"
        return f"Done. I used: {called}."

    # -- helpers ----------------------------------------------------------------------

    def _new_id(self) -> str:
        self._counter += 1
        return f"call_{self.seed}_{self._counter}"

    def _arguments(self, name: str, request: ModelRequest) -> str:
        for pattern, given in self.arguments.items():
            if fnmatch.fnmatchcase(name, pattern):
                value = given(request) if callable(given) else given
                return value if isinstance(value, str) else json.dumps(value)
        schema = self.state.schemas.get(name, {"type": "object"})
        return json.dumps(self.values.generate(schema, self._rng))
