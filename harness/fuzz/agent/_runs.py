"""``agent_runs(factory)``: a hypothesis strategy whose examples are whole runs of an agent.

Drawing an example builds a fresh agent from the factory and runs it with the fuzzer
playing the model (``FuzzPlayer``); the value drawn is a ``FuzzedRun`` (the run as
properties see it, and the turns played), whose ``repr`` reads as the calls made, so
hypothesis's "Falsifying example" line shows them. It reports its new behaviour to
hypothesis with ``target()`` (guided search), measured against a fixed ``baseline``
of behaviour already seen (one per campaign round, so the score of an example never
changes while hypothesis works on it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import reject, strategies as st, target as target_score

from harness._errors import ScriptError, UsageError
from harness.fuzz._loop_options import FUZZ_DEFAULTS
from harness.fuzz._watchdog import WATCHDOG_SECONDS
from harness.fuzz.agent._args import chance, pick
from harness.fuzz.agent._player import FuzzPlayer, Swarm, Turn, swarms
from harness.fuzz.agent._target import FuzzAgent, LoopTarget, Target, WireTarget
from harness.loop import Trace
from harness.scenarios._agent import AgentFactory, describe_factory
from harness.scenarios._coverage import name_pattern
from harness.scenarios._properties import AgentRun
from harness.scenarios._wire_agent import WireFactory

__all__ = [
    "WATCHDOG_SECONDS",
    "AgentAbort",
    "FuzzedRun",
    "agent_runs",
    "run_features",
    "target_runs",
]

_MAX_DEPTH = 12
"""Distinct successful tools counted in the depth features."""


class AgentAbort(BaseException):
    """Ends a campaign at once, past hypothesis (a usage error is not a bug to shrink)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


@dataclasses.dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class FuzzedRun:
    """One example: the agent's run (``run``) and what the fuzzer played (``turns``)."""

    run: AgentRun
    """The run as properties see it (``error`` set when it raised)."""
    turns: tuple[Turn, ...]
    """The model turns, in order."""
    agent: FuzzAgent
    """The fresh agent it ran: an ``Agent`` (its options, with the fuzzer's defaults
    applied), or a ``WireAgent`` on the wire."""
    swarm: Swarm
    definitions: tuple[Any, ...] = ()
    """Every distinct tool definition the model was sent (for the secrets invariant)."""
    features: frozenset[str] = frozenset()
    """What it did, as coverage features (see ``run_features``)."""

    def steps(self) -> list[dict[str, Any]]:
        """Scripted steps that replay it (references, tool patterns and ranks)."""
        return [turn.to_data() for turn in self.turns]

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """How hypothesis prints it (it would otherwise print every dataclass field)."""
        printer.text(repr(self))

    def __repr__(self) -> str:
        played = "; ".join(repr(t) for t in self.turns) or "(no turn)"
        error = self.run.error
        ending = f" -> {type(error).__name__}" if error is not None else ""
        return f"FuzzedRun({played}{ending})"


def run_features(trace: Trace, error: BaseException | None) -> frozenset[str]:
    """Coverage features of a run: offered-toolset states, (tool, outcome) pairs, which
    successful call followed which, how often a tool succeeded (1, 2, 3 or more), which
    tool succeeded when n distinct tools had (up to ``_MAX_DEPTH``: a chain of different
    successful calls going deeper is new behaviour; one tool called again is not),
    strategy changes and transitions, and the ending; names counted by pattern."""
    found: set[str] = set()
    previous = "start"
    successes: dict[str, int] = {}
    for iteration in trace.iterations:
        offered = sorted({name_pattern(n) for n in iteration.offered})
        found.add("offered:" + ",".join(offered))
        for call in iteration.calls:
            pattern = name_pattern(call.name)
            outcome = f"error:{call.error_kind}" if call.is_error else "ok"
            found.add(f"call:{pattern}:{outcome}")
            if not call.is_error:  # what succeeded after what, how often, how deep
                found.add(f"after:{previous}>{pattern}")
                previous = pattern
                successes[pattern] = successes.get(pattern, 0) + 1
                found.add(f"count:{pattern}:{min(successes[pattern], 3)}")
                found.add(f"depth:{min(len(successes), _MAX_DEPTH)}:{pattern}")
        for change in iteration.changes:
            added = "+".join(sorted({name_pattern(n) for n in change.added}))
            removed = "+".join(sorted({name_pattern(n) for n in change.removed}))
            found.add(f"change:{change.strategy}:{added}-{removed}")
    for event in trace.events:
        to_state = getattr(event, "to_state", None)
        if isinstance(to_state, str):
            found.add(f"state:{getattr(event, 'from_state', None)}->{to_state}")
    found.add("end:" + (type(error).__name__ if error is not None else "answer"))
    return frozenset(found)


class _Collecting(FuzzPlayer):
    """The player, also keeping the distinct tool definitions it was sent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.definitions: list[Any] = []
        self._last_tools: object = None

    def request(self, request: Any) -> Any:
        if request.tools is not self._last_tools:
            self._last_tools = request.tools
            self.definitions.extend(request.tools)
        return super().request(request)


def agent_runs(
    factory: AgentFactory | WireFactory,
    *,
    name: str | None = None,
    wire: str | None = None,
    max_turns: int = 12,
    swarm: bool = True,
    defaults: Mapping[str, Any] = FUZZ_DEFAULTS,
    baseline: frozenset[str] | None = frozenset(),
    stop: Callable[[], bool] | None = None,
    watchdog: float | None = None,
    corpus: Sequence[Sequence[dict[str, Any]]] = (),
    weights: Sequence[int] | None = None,
    corpus_percent: int = 70,
) -> st.SearchStrategy[FuzzedRun]:
    """Whole runs of the agent ``factory`` makes, with the fuzzer playing the model.

    ``factory`` makes an agent for the harness's loop (no arguments), or, with ``wire``
    (``openai-chat``, ``openai-responses``, ``anthropic``), an agent on any framework:
    ``factory(base_url, api_key)`` returns ``{"run": ..., "prompt": ..., "state": ...}``
    and the fuzzer answers on a loopback endpoint in that wire format.
    ``swarm`` draws per-example settings (some tools left out, more or fewer parallel
    calls, provider errors); ``baseline`` is the behaviour already seen, and each run
    reports its new features with ``target()`` (``None``: no guidance). ``stop()``
    true rejects examples without running them (a time budget). ``watchdog`` seconds
    arm the signal watchdog around each run (``harness.fuzz._watchdog``). With a
    ``corpus`` (scripts of earlier runs that did something new) and its ``weights``,
    ``corpus_percent`` % of the examples first replay a drawn prefix of a drawn entry
    (chosen by weight), then go on drawing:
    the search starts again from where earlier runs got to. A factory that raises or
    returns the wrong shape ends the campaign (``AgentAbort``).
    """
    target: Target
    label = name or describe_factory(factory)
    if wire is not None:
        target = WireTarget(factory, label, wire)  # type: ignore[arg-type]
    else:
        target = LoopTarget(factory, label, defaults)  # type: ignore[arg-type]
    return target_runs(
        target,
        max_turns=max_turns,
        swarm=swarm,
        baseline=baseline,
        stop=stop,
        watchdog=watchdog,
        corpus=corpus,
        weights=weights,
        corpus_percent=corpus_percent,
    )


def target_runs(
    target: Target,
    *,
    max_turns: int = 12,
    swarm: bool = True,
    baseline: frozenset[str] | None = frozenset(),
    stop: Callable[[], bool] | None = None,
    watchdog: float | None = None,
    corpus: Sequence[Sequence[dict[str, Any]]] = (),
    weights: Sequence[int] | None = None,
    corpus_percent: int = 70,
) -> st.SearchStrategy[FuzzedRun]:
    """``agent_runs`` of a built ``Target`` (the search's own entry)."""
    entries = [list(e) for e in corpus]
    chosen_weights = list(weights) if weights is not None else [1] * len(entries)

    @st.composite
    def draw_run(draw: st.DrawFn) -> FuzzedRun:
        if stop is not None and stop():
            reject()
        try:
            agent = target.build()
        except Exception as exc:
            raise AgentAbort(exc) from exc
        chosen = draw(swarms()) if swarm else Swarm()
        prefix: list[dict[str, Any]] = []
        if entries and chance(draw, corpus_percent):
            entry = entries[pick(draw, chosen_weights)]
            # mostly all of it (its new behaviour is at its end), else up to a drawn turn
            whole = chance(draw, 60)
            prefix = entry if whole else entry[: draw(st.integers(0, len(entry)))]
        turns = max_turns + len(prefix)
        limit = target.limit(agent)
        if limit is not None and not chosen.to_the_limit:
            turns = min(turns, limit)
        player = _Collecting(
            draw,
            swarm=chosen,
            max_turns=max(turns, 0),
            prefix=prefix,
            retry_after=target.retry_after,
        )
        try:
            run = target.play(agent, player, watchdog=watchdog)
        except UsageError as exc:
            raise AgentAbort(exc) from exc
        if isinstance(run.error, ScriptError):
            if not prefix:
                raise run.error
            reject()  # the corpus prefix no longer fits this agent
        features = run_features(run.trace, run.error)
        if baseline is not None:
            target_score(float(len(features - baseline)), label="new behaviour")
        return FuzzedRun(
            run=run,
            turns=tuple(player.turns),
            agent=agent,
            swarm=chosen,
            definitions=tuple(player.definitions),
            features=features,
        )

    return draw_run()
