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
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import reject, strategies as st, target as target_score

from harness._errors import ScriptError, UsageError
from harness.fuzz._loop_options import FUZZ_DEFAULTS
from harness.fuzz._watchdog import WATCHDOG_SECONDS
from harness.fuzz.agent._args import chance, integer, pick
from harness.fuzz.agent._player import FuzzPlayer, Swarm, Turn, swarms
from harness.fuzz.agent._seen import leaves
from harness.fuzz.agent._target import FuzzAgent, LoopTarget, Target, WireTarget
from harness.loop import Trace
from harness.models import steps_from_data
from harness.models._scripted._refs import parse_json
from harness.scenarios._agent import AgentFactory, describe_factory
from harness.scenarios._coverage import name_pattern
from harness.scenarios._properties import AgentRun
from harness.scenarios._wire_agent import WireFactory

__all__ = [
    "WATCHDOG_SECONDS",
    "AgentAbort",
    "FuzzedRun",
    "agent_runs",
    "new_extremes",
    "result_extremes",
    "run_features",
    "target_runs",
]

_MAX_DEPTH = 12
"""Distinct successful tools counted in the depth features."""
_MAX_NUMBERS = 48
"""Leaves of a result read for its numbers."""


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
    extremes: Mapping[str, tuple[float, float]] = dataclasses.field(default_factory=dict)
    """The extremes of the numbers its results showed (see ``result_extremes``)."""

    def steps(self) -> list[dict[str, Any]]:
        """Scripted steps that replay it (references, tool patterns and ranks)."""
        return [turn.to_data() for turn in self.turns]

    def moves(self) -> dict[str, int]:
        """How many of its calls and values each move of the player made (``repeat``,
        ``largest``, ``limit``, ``copy``, ``boundary``, ...)."""
        counts: dict[str, int] = {}
        for turn in self.turns:
            for call in turn.calls:
                for move in call.moves:
                    counts[move] = counts.get(move, 0) + 1
        return counts

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


def result_extremes(trace: Trace) -> dict[str, tuple[float, float]]:
    """The smallest and largest number under each key of each tool's results in a run
    (``withdraw.balance``: the balance the ``withdraw`` results showed), tools counted by
    pattern: a run that takes a balance lower than any before is progress toward an
    overdraft, whichever calls it took."""
    found: dict[str, tuple[float, float]] = {}
    for iteration in trace.iterations:
        for call in iteration.calls:
            if call.is_error:
                continue
            value = parse_json(call.content)
            if not isinstance(value, (dict, list)):
                continue
            pattern = name_pattern(call.name)
            for count, (path, leaf) in enumerate(leaves(value)):
                if count >= _MAX_NUMBERS:
                    break
                if isinstance(leaf, bool) or not isinstance(leaf, (int, float)):
                    continue
                number = float(leaf)
                if not math.isfinite(number):
                    continue
                key = next((p for p in reversed(path) if isinstance(p, str)), "")
                name = f"{pattern}.{key}"
                low, high = found.get(name, (number, number))
                found[name] = (min(low, number), max(high, number))
    return found


def new_extremes(
    found: Mapping[str, tuple[float, float]], known: Mapping[str, tuple[float, float]]
) -> list[str]:
    """``low:KEY`` / ``high:KEY`` for each number of ``found`` beyond what ``known`` held
    (a key ``known`` lacks is no extreme: a new tool's results are new behaviour
    already)."""
    out = []
    for name, (low, high) in found.items():
        bounds = known.get(name)
        if bounds is None:
            continue
        if low < bounds[0]:
            out.append(f"low:{name}")
        if high > bounds[1]:
            out.append(f"high:{name}")
    return out


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class _Plan:
    """What every example of one round shares (fixed for the round: examples repeat)."""

    target: Target
    max_turns: int
    swarm: bool
    baseline: frozenset[str] | None
    extremes: Mapping[str, tuple[float, float]] | None
    stop: Callable[[], bool] | None
    watchdog: float | None
    entries: tuple[list[dict[str, Any]], ...]
    weights: tuple[int, ...]
    corpus_percent: int
    parsed: dict[int, list[Any]] = dataclasses.field(default_factory=dict)
    """Each corpus entry's steps, built once per round (by position)."""

    def __repr__(self) -> str:  # hypothesis shows it in the strategy's repr: keep it short
        return f"<{self.target.name}, {len(self.entries)} corpus entries>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """How hypothesis prints it (it would otherwise print every field)."""
        printer.text(repr(self))

    def prefix(self, draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[Any]]:
        """A drawn corpus prefix (data and built steps), or none."""
        if not self.entries or not chance(draw, self.corpus_percent):
            return [], []
        index = pick(draw, self.weights)
        entry = self.entries[index]
        steps = self.parsed.get(index)
        if steps is None:
            steps = self.parsed[index] = steps_from_data(entry)
        # mostly all of it (its new behaviour is at its end), else up to a drawn turn
        if chance(draw, 60):
            return entry, steps
        cut = integer(draw, 0, len(entry))
        return entry[:cut], steps[:cut]


@st.composite
def _draw_run(draw: st.DrawFn, plan: _Plan) -> FuzzedRun:
    """One example of a round (module level: hypothesis reads a composite's source when
    it is defined, so one defined per round would be read every round)."""
    if plan.stop is not None and plan.stop():
        reject()
    target = plan.target
    try:
        agent = target.build()
    except Exception as exc:
        raise AgentAbort(exc) from exc
    chosen = draw(swarms()) if plan.swarm else Swarm()
    prefix, built = plan.prefix(draw)
    turns = plan.max_turns + len(prefix)
    limit = target.limit(agent)
    if limit is not None and not chosen.to_the_limit:
        turns = min(turns, limit)
    player = _Collecting(
        draw,
        swarm=chosen,
        max_turns=max(turns, 0),
        prefix=prefix,
        prefix_steps=built,
        retry_after=target.retry_after,
    )
    try:
        run = target.play(agent, player, watchdog=plan.watchdog)
    except UsageError as exc:
        raise AgentAbort(exc) from exc
    if isinstance(run.error, ScriptError):
        if not prefix:
            raise run.error
        reject()  # the corpus prefix no longer fits this agent
    features = run_features(run.trace, run.error)
    extremes = result_extremes(run.trace)
    if plan.baseline is not None:
        score = len(features - plan.baseline)
        if plan.extremes is not None:
            score += len(new_extremes(extremes, plan.extremes))
        target_score(float(score), label="new behaviour")
    return FuzzedRun(
        run=run,
        turns=tuple(player.turns),
        agent=agent,
        swarm=chosen,
        definitions=tuple(player.definitions),
        features=features,
        extremes=extremes,
    )


def target_runs(
    target: Target,
    *,
    max_turns: int = 12,
    swarm: bool = True,
    baseline: frozenset[str] | None = frozenset(),
    extremes: Mapping[str, tuple[float, float]] | None = None,
    stop: Callable[[], bool] | None = None,
    watchdog: float | None = None,
    corpus: Sequence[Sequence[dict[str, Any]]] = (),
    weights: Sequence[int] | None = None,
    corpus_percent: int = 70,
) -> st.SearchStrategy[FuzzedRun]:
    """``agent_runs`` of a built ``Target`` (the search's own entry); ``extremes`` are
    the numbers' extremes already seen (``result_extremes``), beyond which a run scores
    as new behaviour too."""
    entries = tuple(list(e) for e in corpus)
    plan = _Plan(
        target=target,
        max_turns=max_turns,
        swarm=swarm,
        baseline=baseline,
        extremes=extremes,
        stop=stop,
        watchdog=watchdog,
        entries=entries,
        weights=tuple(weights) if weights is not None else (1,) * len(entries),
        corpus_percent=corpus_percent,
    )
    return _draw_run(plan)
