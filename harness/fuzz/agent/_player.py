"""The fuzzer playing the model: each turn is drawn from hypothesis, against what is offered.

On each request the player reads what is new (results, offered names) into its pool of
seen values, then draws one turn: answer, call one offered tool, call two or three in
one turn, or (when the example allows it) fail like a provider. Tools are weighted
toward those not called yet and those injected since the previous request; a swarm
setting drawn per example leaves some tools out altogether. Every turn is kept as a
``Turn`` whose ``repr`` reads as the calls made (``read_thread(thread_id='t-3' <- call 1
.threads[0].id)``) and whose ``to_data`` is a scripted step with references, so the
counterexample replays on a fresh agent.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from hypothesis import strategies as st

from harness.formats._search_names import SEARCH_TOOL_NAMES
from harness.fuzz.agent._args import (
    CLOSE,
    ArgumentMaker,
    Copied,
    Draw,
    affinity,
    chance,
    concrete,
    integer,
    offered_schemas,
    pick,
    schema_info,
    short_repr,
    stated_numbers,
    to_data,
)
from harness.fuzz.agent._seen import SeenValues
from harness.loop import Model, ModelCapabilities, ModelRequest, ModelResponse
from harness.loop._tool_choice import permitted
from harness.messages import AssistantMessage, ToolCall
from harness.models import ScriptedModel, raise_error, steps_from_data
from harness.models._scripted._model import _callable_names
from harness.models._scripted._refs import words
from harness.scenarios._coverage import name_pattern, offered_patterns
from harness.tools import ToolChoice, ToolDefinition, match_names

__all__ = [
    "ANSWER",
    "FUZZ_CAPABILITIES",
    "FuzzPlayer",
    "PlannedCall",
    "Swarm",
    "Turn",
    "swarms",
]

ANSWER = "Done."
"""The fuzzer's final text answer."""

TurnKind = Literal["calls", "answer", "error", "replayed"]

FUZZ_CAPABILITIES: ModelCapabilities = ScriptedModel.capabilities
"""What the fuzzer's model claims: exactly what the model its scripts replay with
claims (a ``ScriptedModel``: what Chat Completions supports), so that an agent picks
the same tool search, the same allowed subsets, on the fuzzed run and on its replay
(``ToolSearch``, ``AllowedTools`` with ``native="auto"``)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Swarm:
    """What one example may do (swarm testing: each example leaves some things out)."""

    answer_percent: int = 6
    """Chance, per turn, of answering (ending the run)."""
    parallel_percent: int = 12
    """Chance, per turn, of calling two or three tools at once."""
    error_percent: int = 0
    """Chance, per turn, of a provider error (ends the run with ``ProviderError``)."""
    copy_percent: int = 80
    """Chance of copying a value seen rather than drawing one from the schema."""
    repeat_percent: int = 15
    """Chance, per call, of repeating an earlier call: the same ids, the largest (or
    smallest) valid amount, or a step toward a limit the run showed."""
    to_the_limit: bool = False
    """Keep calling up to the agent's ``max_iterations`` (the run then ends with
    ``MaxIterationsExceeded``, which properties judge too) rather than answer before."""
    left_out: int = 0
    """Tools whose pattern hashes to this (mod 4, when not 0) are never called (in three
    examples in eight: leaving a tool out lets the others go further, a "cancel" that
    undoes progress for one)."""


@functools.lru_cache(maxsize=1)
def swarms() -> st.SearchStrategy[Swarm]:
    """Swarm settings; the simplest (0) draws give the default behaviour."""
    return st.builds(
        lambda a, p, e, c, left, limit, r: Swarm(
            answer_percent=(6, 3, 12)[a],
            parallel_percent=(12, 0, 35)[p],
            error_percent=(0, 4)[e],
            copy_percent=(80, 95, 50)[c],
            left_out=left,
            to_the_limit=limit == 7,
            repeat_percent=(15, 0, 40)[r],
        ),
        st.integers(0, 2),
        st.integers(0, 2),
        st.integers(0, 1),
        st.integers(0, 2),
        st.integers(0, 7).map(lambda n: n if n < 4 else 0),
        st.integers(0, 7),
        st.integers(0, 2),
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class PlannedCall:
    """One call the player made: the tool (by name, or by pattern and rank) and arguments."""

    name: str
    pattern: str
    """``name`` with its id-like parts as ``*`` (equal to ``name`` when it has none)."""
    rank: int
    """Its position among the offered tools matching ``pattern`` (1-based)."""
    args: dict[str, Any]
    """Values, ``Copied`` values (with their reference) or lists of them."""
    moves: tuple[str, ...] = ()
    """How the call and its arguments were made (``repeat``, ``largest``, ``copy``,
    ``limit``, ...: see ``ArgumentMaker.moves`` and ``FuzzPlayer._repeat``)."""

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{k}={v!r}" if isinstance(v, Copied) else f"{k}={short_repr(v)}"
            for k, v in self.args.items()
        )
        return f"{self.name}({shown})"

    def to_data(self) -> dict[str, Any]:
        """The scripted call (``{call, rank?, args}``)."""
        data: dict[str, Any] = {"call": self.pattern}
        if self.pattern != self.name:
            data["rank"] = self.rank
        data["args"] = to_data(self.args)
        return data


@dataclasses.dataclass(frozen=True, kw_only=True)
class Turn:
    """One model turn the player made."""

    kind: TurnKind
    calls: tuple[PlannedCall, ...] = ()
    answer: Any = ANSWER
    """The final answer: a text, or a structured value when the run asks for one."""
    status: int = 500
    """The HTTP status of a provider error."""
    retry_after: float | None = None
    """The ``retry_after`` of a provider error (on the wire: so the SDK retries at once)."""
    step: dict[str, Any] | None = None
    """For a ``replayed`` turn: the scripted step it replayed (a corpus prefix)."""

    def __repr__(self) -> str:
        if self.step is not None:
            return f"<replayed {json.dumps(self.step, default=str)[:80]}>"
        if self.kind == "calls":
            return " + ".join(repr(c) for c in self.calls)
        if self.kind == "error":
            return f"<provider error {self.status}>"
        return f"answer({short_repr(self.answer)})"

    def to_data(self) -> dict[str, Any]:
        """The scripted step that replays this turn."""
        if self.step is not None:
            return self.step
        if self.kind == "calls":
            if len(self.calls) == 1:
                return self.calls[0].to_data()
            return {"calls": [c.to_data() for c in self.calls]}
        if self.kind == "error":
            error: dict[str, Any] = {"status": self.status}
            if self.retry_after is not None:
                error["retry_after"] = self.retry_after
            return {"raise": error}
        if isinstance(self.answer, str):
            return {"reply": self.answer}
        return {"output": self.answer}


@functools.lru_cache(maxsize=64)
def _output_strategy(key: str) -> st.SearchStrategy[Any]:
    from hypothesis_jsonschema import from_schema

    return from_schema(json.loads(key))


class FuzzPlayer(Model):
    """A model whose every turn is drawn by hypothesis (see the module docstring)."""

    __test__ = False
    capabilities = FUZZ_CAPABILITIES

    def __init__(
        self,
        draw: Draw,
        *,
        swarm: Swarm,
        max_turns: int,
        prefix: Sequence[dict[str, Any]] = (),
        prefix_steps: Sequence[Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.draw = draw
        self.retry_after = retry_after
        self.swarm = swarm
        self.max_turns = max_turns
        self.name = "fuzz"
        self.turns: list[Turn] = []
        self.seen = SeenValues()
        self.args = ArgumentMaker(draw, copy_percent=swarm.copy_percent)
        self.called: dict[str, int] = {}
        self.failed_only: set[str] = set()
        self.made: list[tuple[PlannedCall, int]] = []
        """The calls this player drew, with their call numbers (what a repeat repeats)."""
        self._offered_before: frozenset[str] = frozenset()
        self._ids = 0
        self.prefix = list(prefix)
        """Scripted steps played first, as they are (a corpus entry of an earlier round)."""
        built = prefix_steps if prefix_steps is not None else steps_from_data(self.prefix)
        self._replaying = (
            ScriptedModel(list(built), name="corpus", require_exhausted=False)
            if self.prefix
            else None
        )

    # -- one turn ---------------------------------------------------------------------

    def request(self, request: ModelRequest) -> ModelResponse:
        self.seen.read(request)
        self._note_outcomes()
        names = _callable_names(request)
        fresh = frozenset(names) - self._offered_before
        self._offered_before = frozenset(names)
        replaying = self._replaying
        if replaying is not None and replaying.position < len(replaying.steps):
            step = self.prefix[replaying.position]
            response = replaying.request(request)  # a ScriptError: the prefix no longer fits
            self.turns.append(Turn(kind="replayed", step=step))
            patterns = offered_patterns(names)
            for call in response.message.tool_calls or ():
                self._ids += 1
                pattern = patterns.get(call.name) or name_pattern(call.name)
                self.called[pattern] = self.called.get(pattern, 0) + 1
            return response
        _PENDING.turn = (self, request, names, fresh)
        turn = self.draw(_TURN)
        self.turns.append(turn)
        if turn.kind == "error":
            raise raise_error(status=turn.status, retry_after=turn.retry_after).error()
        if turn.kind == "answer":
            text = turn.answer if isinstance(turn.answer, str) else json.dumps(turn.answer)
            return ModelResponse(message=AssistantMessage(content=text), model_name=self.name)
        calls = []
        for planned in turn.calls:
            self._ids += 1
            calls.append(
                ToolCall(
                    id=f"call_{self._ids}",
                    name=planned.name,
                    arguments=json.dumps(concrete(planned.args)),
                )
            )
            self.made.append((planned, self._ids))
            self.called[planned.pattern] = self.called.get(planned.pattern, 0) + 1
        return ModelResponse(
            message=AssistantMessage(tool_calls=tuple(calls)),
            finish_reason="tool_calls",
            model_name=self.name,
        )

    def _turn(self, request: ModelRequest, names: tuple[str, ...], fresh: frozenset[str]) -> Turn:
        settings = request.settings
        choice, permitted = _obeyed(settings.tool_choice, names)
        callable_names = [n for n in permitted if not self._left_out(n)] or list(permitted)
        must_call = choice in ("required", "tool") and bool(callable_names)
        if choice == "none" or not callable_names:
            return self._answer(request)
        if len(self.turns) >= self.max_turns:
            if not must_call:
                return self._answer(request)
            # out of turns but made to call (a framework's output tool under
            # tool_choice=required): wrap up with a tool not called yet, as a model would
            uncalled = [n for n in callable_names if name_pattern(n) not in self.called]
            callable_names = uncalled or callable_names
        swarm = self.swarm
        # one roll: answer, provider error, several calls, one call, counted from 40.
        # Hypothesis leans toward the ends of a range (0, 99) at an example's first
        # draws; an ending there would end many runs at once.
        roll = (integer(self.draw, 0, 99) - 40) % 100
        if roll < swarm.answer_percent and not must_call:
            return self._answer(request)
        if roll < swarm.answer_percent + swarm.error_percent:
            status = (500, 429, 503)[pick(self.draw, (3, 1, 1))]
            return Turn(kind="error", status=status, retry_after=self.retry_after)
        count = 1
        parallel_until = swarm.answer_percent + swarm.error_percent + swarm.parallel_percent
        # a tool named in tool_choice is called once, as a provider's model does
        if roll < parallel_until and settings.parallel_tool_calls is not False and choice != "tool":
            count = 2 if chance(self.draw, 80) else 3
        offer = _Offer(request, names, fresh)
        calls = tuple(self._call(callable_names, offer) for _ in range(count))
        return Turn(kind="calls", calls=calls)

    def _answer(self, request: ModelRequest) -> Turn:
        schema = request.settings.output_schema
        if schema is None:
            return Turn(kind="answer")
        key = json.dumps(schema, sort_keys=True, default=str)
        return Turn(kind="answer", answer=self.draw(_output_strategy(key)))

    def _left_out(self, name: str) -> bool:
        if not self.swarm.left_out:
            return False
        return hash_name(name_pattern(name)) % 4 == self.swarm.left_out

    def _call(self, candidates: list[str], offer: _Offer) -> PlannedCall:
        if self.made and chance(self.draw, self.swarm.repeat_percent):
            repeated = self._repeat(candidates, offer)
            if repeated is not None:
                return repeated
        weights = []
        keys, latest = self.seen.keys()
        schemas = offer.schemas
        for name in candidates:
            pattern = offer.patterns[name]
            weight = 2
            if pattern not in self.called:
                weight += 4
            if name in offer.fresh:
                weight += 6
            if pattern in self.failed_only:
                weight += 1
            weight += _inputs_ready(schemas.get(name, {}), keys, latest)
            weights.append(weight)
        name = candidates[pick(self.draw, weights)]
        definition = offer.definitions.get(name)
        self.args.moves = []
        if definition is not None and _is_search(definition) and offer.deferred:
            args: dict[str, Any] = {"query": self._query(offer.deferred)}
            self.args.moves.append("search")
        else:
            stated = stated_numbers(definition.description if definition is not None else None)
            args = self.args.arguments(schemas.get(name, {}), self.seen, stated=stated)
        return offer.planned(name, args, tuple(self.args.moves))

    def _query(self, deferred: Sequence[ToolDefinition]) -> str:
        """A search for deferred tools: a word of one's name or description."""
        definition = deferred[pick(self.draw, [1] * len(deferred))]
        found = words(definition.name.replace("_", " ")) + words(definition.description or "")[:8]
        return found[pick(self.draw, [1] * len(found))] if found else definition.name

    def _repeat(self, candidates: list[str], offer: _Offer) -> PlannedCall | None:
        """An earlier call again, still callable: the same ids, and each number the
        largest or smallest valid one, the same, or a step toward a limit seen."""
        by_pattern = {offer.patterns[n]: n for n in reversed(candidates)}
        options = [(p, n) for p, n in self.made if p.pattern in by_pattern]
        if not options:
            return None
        answered = self.seen.answered
        weights = [
            (1 if answered.get(number, ("", True))[1] else 3) + position // 4
            for position, (_planned, number) in enumerate(options)
        ]
        earlier, _number = options[pick(self.draw, weights)]
        name = by_pattern[earlier.pattern]
        properties = offer.schemas.get(name, {}).get("properties")
        moves = ["repeat"]
        if not isinstance(properties, Mapping):
            return offer.planned(name, dict(earlier.args), tuple(moves))
        args: dict[str, Any] = {}
        for key, value in earlier.args.items():
            prop = properties.get(key)
            args[key] = value
            if isinstance(prop, Mapping) and not isinstance(value, (list, dict)):
                moved = self._extreme(schema_info(prop))
                if moved is not None:
                    args[key], move = moved
                    moves.append(move)
        return offer.planned(name, args, tuple(moves))

    def _extreme(self, info: Any) -> tuple[Any, str] | None:
        """A number for an argument of ``info`` and how it was made: the largest or
        smallest valid one, or a step toward a limit the run showed (``None``: keep the
        earlier value)."""
        if not info.kinds & {"integer", "number"}:
            return None
        move = pick(self.draw, (3, 1, 2, 2))  # largest, smallest, the same, toward a limit
        if move == 2:
            return None
        if move == 3:
            toward = self.args.toward_limit(info, self.seen) if self.seen.numbers else None
            return (toward, "limit") if toward is not None else None
        how = "largest" if move == 0 else "smallest"
        bound = info.high if move == 0 else info.low
        if bound is None:  # no bound in the schema: the largest (smallest) number seen
            fitting = [n for n in self.seen.numbers if info.valid(n.value)]
            if not fitting:
                return None
            chosen = (max if move == 0 else min)(fitting, key=lambda n: n.value)
            return Copied(chosen.value, chosen.ref), how
        value = int(bound) if info.integer else bound
        return (value, how) if info.valid(value) else None

    def _note_outcomes(self) -> None:
        """Remember tools whose calls so far all failed (worth trying again)."""
        outcomes: dict[str, list[bool]] = {}
        for name, is_error in self.seen.answered.values():
            outcomes.setdefault(name_pattern(name), []).append(is_error)
        self.failed_only = {p for p, errors in outcomes.items() if all(errors)}

    # -- what was played --------------------------------------------------------------

    def steps(self) -> list[dict[str, Any]]:
        """The scripted steps that replay the run (references, patterns and ranks)."""
        return [turn.to_data() for turn in self.turns]


class _Offer:
    """One request's callable tools as the player reads them: schemas, definitions,
    patterns (ids folded), the ones just offered, the deferred tools a search may find."""

    def __init__(self, request: ModelRequest, names: tuple[str, ...], fresh: frozenset[str]):
        self.names = names
        self.fresh = fresh
        self.definitions = {d.name: d for d in request.tools}
        self.schemas = offered_schemas(request)
        self.patterns = offered_patterns(names)
        self.deferred = [d for d in request.tools if d.defer_loading]

    def planned(self, name: str, args: dict[str, Any], moves: tuple[str, ...] = ()) -> PlannedCall:
        """The call of ``name`` by its pattern and rank, as the replaying model finds it."""
        pattern = self.patterns[name]
        rank = match_names(pattern, self.names).index(name) + 1
        return PlannedCall(name=name, pattern=pattern, rank=rank, args=args, moves=moves)


def _is_search(definition: ToolDefinition) -> bool:
    """A client tool search (its calls reveal deferred tools)."""
    return definition.search == "client" or (
        definition.search is None and definition.name == SEARCH_TOOL_NAMES["client"]
    )


def _inputs_ready(schema: Mapping[str, Any], keys: set[str], latest: set[str]) -> int:
    """Extra weight for a tool whose required inputs the conversation now holds, under
    their own names (``thread_id`` after a result with a ``thread_id``): most when one of
    them just arrived. The next step of a chain of ids is usually the tool whose input
    the last result gave."""
    required = [p for p in schema.get("required") or () if isinstance(p, str)]
    if not required:
        return 0
    matched = [p for p in required if any(affinity(p, k) >= CLOSE for k in keys)]
    if len(matched) < len(required):
        return 0
    fresh = any(affinity(p, k) >= CLOSE for p in matched for k in latest)
    return 8 if fresh else 3


_PENDING = threading.local()
"""The turn a player is about to draw (set right before the draw, in the drawing thread)."""


@st.composite
def _turn_strategy(draw: st.DrawFn) -> Turn:
    """One turn of the pending player: its draws as one strategy, so one span that
    hypothesis can delete whole when it shrinks (taking the later turns along to the
    states they now meet). Built once: a strategy built per turn is validated per turn."""
    player: FuzzPlayer
    player, request, names, fresh = _PENDING.turn
    outer = player.draw
    player.draw = player.args.draw = draw
    try:
        return player._turn(request, names, fresh)
    finally:
        player.draw = player.args.draw = outer


_TURN = _turn_strategy()


def hash_name(text: str) -> int:
    """A small stable hash (``hash()`` of a text differs between processes)."""
    value = 0
    for char in text:
        value = (value * 31 + ord(char)) % 1_000_003
    return value


def _obeyed(tool_choice: ToolChoice | None, names: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The request's tool choice as a model obeys it: its mode, and the offered names it
    may call (``permitted``: the loop's one reading of the rules); a forced tool that is
    not offered leaves the model free, as the providers' models are."""
    mode = "auto" if tool_choice is None else tool_choice.mode
    may = permitted(tool_choice, names)
    if mode == "tool" and not may:
        return "auto", names
    return mode, may
