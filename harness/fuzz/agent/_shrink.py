"""Shrinking a failing run at the level of its script: fewer turns, fewer calls, fewer arguments.

The steps of a fuzzed run (scripted steps with references to earlier results) replay
on a fresh agent, so a smaller script can be tried directly: drop a turn (the call
numbers of later references move down with it), drop one call of a turn with several,
drop an argument, drop the ``±1`` of a boundary value. A candidate is kept when its
replay fails with the same finding; the loop repeats until nothing more goes or the
time budget is spent. Each try is one run of the agent (milliseconds), and every
candidate is a valid script, which is why this beats shrinking hypothesis's choice
sequence here (where deleting a turn re-interprets the choices after it).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from harness._errors import ScriptError
from harness.fuzz.agent._seen import leaves
from harness.models._scripted._refs import (
    REF_KEY,
    format_path,
    parse_json,
    ref_from_data,
    words,
)

if TYPE_CHECKING:
    from harness.fuzz.agent._judge import Finding
    from harness.scenarios._properties import AgentRun

__all__ = [
    "ALL_PASSES",
    "TURN_PASSES",
    "Shrunk",
    "minimise",
    "shrink_steps",
    "step_calls",
    "without_turns",
]

Steps = list[dict[str, Any]]
Replay = Callable[[Steps], "tuple[AgentRun, Finding | None]"]
"""Runs steps on a fresh agent: the run and its finding (``None`` when it passed)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Shrunk:
    """The smallest failing script found, its run and finding."""

    steps: Steps
    run: AgentRun
    finding: Finding
    tries: int
    """Replays made while shrinking."""


def step_calls(step: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls of a step (one for ``call``, several for ``calls``, none otherwise)."""
    if "call" in step:
        return [step]
    return list(step.get("calls", ()))


class _Invalid(Exception):
    """A reference points at a removed call that no kept call can stand in for."""


StandIn = Callable[[dict[str, Any], int], dict[str, Any]]
"""A new reference for one into a removed call (``_Invalid`` when there is none)."""


def _remap(value: Any, new_number: dict[int, int], stand_in: StandIn) -> Any:
    """``value`` with each ``call N`` reference renumbered (``stand_in`` for removed ones)."""
    if isinstance(value, dict):
        if REF_KEY in value:
            source = value[REF_KEY]
            if isinstance(source, str) and source.startswith("call "):
                number = int(source.split()[1])
                found = new_number.get(number)
                if found:
                    return {**value, REF_KEY: f"call {found}"}
                return stand_in(value, number)
            return value
        return {k: _remap(v, new_number, stand_in) for k, v in value.items()}
    if isinstance(value, list):
        return [_remap(v, new_number, stand_in) for v in value]
    return value


def _referenced(ref: dict[str, Any], result: Any) -> Any:
    """What ``ref`` (a ``call N`` reference) finds in that call's parsed ``result``."""
    try:
        found = ref_from_data(ref, "shrink")
    except ScriptError:
        return _MISSING
    value = result
    for part in found.path:
        value = _child(value, part)
        if value is _MISSING:
            return _MISSING
    if found.word is not None:
        text = value if isinstance(value, str) else json.dumps(value)
        parts = words(text)
        return parts[found.word] if found.word < len(parts) else _MISSING
    if found.quoted is not None:
        return _MISSING
    return value


_MISSING = object()


def _child(value: Any, part: str | int) -> Any:
    """``value[part]`` along a reference's path, or ``_MISSING``."""
    if isinstance(value, list) and isinstance(part, int) and part < len(value):
        return value[part]
    if isinstance(value, dict) and isinstance(part, str):
        return value.get(part, _MISSING)
    return _MISSING


def _same_value(ref: dict[str, Any], value: Any, result: Any, new: int) -> dict[str, Any] | None:
    """A reference into ``result`` (call ``new``) finding ``value``, or ``None``."""
    for path, leaf in leaves(result):
        if leaf == value and not isinstance(leaf, bool):
            moved = {k: v for k, v in ref.items() if k not in ("path", "word", "quoted")}
            moved[REF_KEY] = f"call {new}"
            if path:
                moved["path"] = format_path(path)
            return moved
    return None


def _without(
    steps: Steps,
    drop: set[tuple[int, int]],
    drop_turns: set[int],
    results: dict[int, Any] | None = None,
) -> Steps | None:
    """``steps`` without the turns ``drop_turns`` and the calls ``drop`` (turn, position).

    References to kept calls are renumbered. One to a removed call moves to a kept
    earlier call whose result (in ``results``, the parsed results of the last run by
    call number) holds the same value, else to the latest kept earlier call of the same
    tool at the same path; without either the candidate is invalid (``None``).
    """
    pattern: dict[int, str] = {}
    new_number: dict[int, int] = {}
    number = kept = 0
    for index, step in enumerate(steps):
        for position, call in enumerate(step_calls(step)):
            number += 1
            pattern[number] = str(call.get("call"))
            if index not in drop_turns and (index, position) not in drop:
                kept += 1
                new_number[number] = kept
    out: Steps = []
    number = 0
    try:
        for index, step in enumerate(steps):
            calls = step_calls(step)
            if not calls:
                if index not in drop_turns:
                    out.append(step)
                continue
            kept_calls = []
            for position, call in enumerate(calls):
                number += 1
                if index in drop_turns or (index, position) in drop:
                    continue
                here = number

                def stand_in(ref: dict[str, Any], old: int, here: int = here) -> dict[str, Any]:
                    earlier = [c for c in range(here - 1, 0, -1) if c in new_number]
                    if results is not None and old in results:
                        value = _referenced(ref, results[old])
                        if value is not _MISSING:
                            for candidate in earlier:
                                if candidate in results:
                                    moved = _same_value(
                                        ref, value, results[candidate], new_number[candidate]
                                    )
                                    if moved is not None:
                                        return moved
                    for candidate in earlier:
                        if pattern[candidate] == pattern[old]:
                            return {**ref, REF_KEY: f"call {new_number[candidate]}"}
                    raise _Invalid

                kept_calls.append(_remap(call, new_number, stand_in))
            if kept_calls:
                out.append(kept_calls[0] if len(kept_calls) == 1 else {"calls": kept_calls})
    except _Invalid:
        return None
    return out


def results_of(run: AgentRun) -> dict[int, Any]:
    """The parsed result of each call of ``run``, by call number."""
    made = [call for iteration in run.trace.iterations for call in iteration.calls]
    return {number: parse_json(call.content) for number, call in enumerate(made, start=1)}


def without_turns(steps: Steps, turns: set[int]) -> Steps | None:
    """``steps`` without the turns at ``turns`` (``None`` when a kept reference needs one)."""
    return _without(steps, set(), turns)


def _literal_candidates(steps: Steps, run: AgentRun) -> Iterator[Steps]:
    """Each copied argument replaced by the value it had (a reference dropped: the call it
    came from may then go). Volatile values (fresh ids) make the replay pass again, so
    only stable ones stay literal."""
    made = [call for iteration in run.trace.iterations for call in iteration.calls]
    position = 0
    for index, step in enumerate(steps):
        for which, call in enumerate(step_calls(step)):
            record = made[position] if position < len(made) else None
            position += 1
            args = call.get("args")
            if record is None or not isinstance(args, dict):
                continue
            try:
                sent = json.loads(record.arguments)
            except ValueError:
                continue
            for key, value in args.items():
                if isinstance(value, dict) and REF_KEY in value and key in sent:
                    yield _replace_args(steps, index, which, {**args, key: sent[key]})


def _simpler_arguments(steps: Steps) -> Iterator[Steps]:
    """Each argument dropped, and each boundary ``add`` dropped, one at a time."""
    for index, step in enumerate(steps):
        for position, call in enumerate(step_calls(step)):
            args = call.get("args")
            if not isinstance(args, dict):
                continue
            for key, value in args.items():
                smaller = {k: v for k, v in args.items() if k != key}
                yield _replace_args(steps, index, position, smaller)
                if isinstance(value, dict) and value.get("add"):
                    plain = {k: v for k, v in value.items() if k != "add"}
                    yield _replace_args(steps, index, position, {**args, key: plain})


READABLE_TEXTS = ("a", "test")
"""Plain texts a shrunk argument tries instead of a drawn one (shortest first)."""


def _plain_text(value: str) -> bool:
    """A short text of printable ASCII: readable as it is."""
    return len(value) <= 24 and value.isascii() and value.isprintable()


def _readable_texts(steps: Steps) -> Iterator[Steps]:
    """Each drawn text that is not plain (``'q\U000759f7jy\x00'``) replaced by a plain
    one: a text kept only for its content still fails with ``a``."""
    for index, step in enumerate(steps):
        for position, call in enumerate(step_calls(step)):
            args = call.get("args")
            if not isinstance(args, dict):
                continue
            for key, value in args.items():
                if isinstance(value, str) and not _plain_text(value):
                    for text in READABLE_TEXTS:
                        yield _replace_args(steps, index, position, {**args, key: text})


def _endings(steps: Steps) -> Iterator[Steps]:
    """Each provider error dropped (the last one answered instead): a run need not go
    through one to fail, and a counterexample reads better without."""
    for index, step in enumerate(steps):
        if "raise" in step:
            if index == len(steps) - 1:
                yield [*steps[:index], {"reply": "Done."}]
            else:
                yield [*steps[:index], *steps[index + 1 :]]


def _replace_args(steps: Steps, index: int, position: int, args: dict[str, Any]) -> Steps:
    changed = copy.deepcopy(steps)
    step = changed[index]
    target = step if "call" in step else step["calls"][position]
    target["args"] = args
    return changed


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _merged_calls(steps: Steps, run: AgentRun) -> Iterator[Steps]:
    """Two calls of one tool with the same arguments but their numbers, as one call of
    the numbers' sums (``book(seats=5)``, ``book(seats=5)``: ``book(seats=10)``): a sum
    over several calls shrinks to fewer calls when one call may carry more."""
    results = results_of(run)
    single = [i for i, s in enumerate(steps) if "call" in s and isinstance(s.get("args"), dict)]
    for later_position, later in enumerate(single):
        for earlier in single[:later_position]:
            first, second = steps[earlier], steps[later]
            if (first["call"], first.get("rank")) != (second["call"], second.get("rank")):
                continue
            a, b = first["args"], second["args"]
            summed = [k for k in b if _number(a.get(k)) and _number(b[k])]
            if a.keys() != b.keys() or not summed:
                continue
            if any(a[k] != b[k] for k in b if k not in summed):
                continue
            kept = _without(steps, set(), {earlier}, results)
            if kept is None:
                continue
            merged = dict(kept[later - 1]["args"])
            merged.update({k: a[k] + b[k] for k in summed})
            yield _replace_args(kept, later - 1, 0, merged)


def _is_call(step: dict[str, Any]) -> bool:
    return "call" in step or "calls" in step


def _turn_cuts(steps: Steps, run: AgentRun) -> Iterator[Steps]:
    """Runs of turns removed, halves first, then ever smaller (the answer is kept)."""
    results = results_of(run)
    body = [i for i, s in enumerate(steps) if _is_call(s)]
    size = max(1, len(body) // 2)
    while size >= 1:
        for start in range(len(body) - size, -1, -size):  # later turns first
            found = _without(steps, set(), set(body[start : start + size]), results)
            if found is not None:
                yield found
        size //= 2


def _call_cuts(steps: Steps, run: AgentRun) -> Iterator[Steps]:
    """One call of a turn with several removed."""
    results = results_of(run)
    for index, step in enumerate(steps):
        calls = step_calls(step)
        if len(calls) > 1:
            for which in range(len(calls)):
                found = _without(steps, {(index, which)}, set(), results)
                if found is not None:
                    yield found


def _size(steps: Steps) -> tuple[int, int, int]:
    calls = sum(len(step_calls(s)) for s in steps)
    return len(steps), calls, len(json.dumps(steps, default=str))


Pass = Callable[[Steps, "AgentRun"], Iterator[Steps]]

ALL_PASSES: tuple[Pass, ...] = (
    _turn_cuts,
    _call_cuts,
    _merged_calls,
    lambda s, r: _endings(s),
    _literal_candidates,
    lambda s, r: _simpler_arguments(s),
    lambda s, r: _readable_texts(s),
)
"""Fewer turns, fewer calls (two calls of one tool merged into one of their sums), no
provider errors, stable values written out, fewer arguments, plain texts."""
TURN_PASSES: tuple[Pass, ...] = ALL_PASSES[:2]


def minimise(
    steps: Steps,
    keeps: Callable[[Steps], AgentRun | None],
    *,
    passes: tuple[Pass, ...] = ALL_PASSES,
    seconds: float = 20.0,
    max_tries: int | None = None,
) -> tuple[Steps, AgentRun, int] | None:
    """The smallest script for which ``keeps`` (a replay) returns a run, its run and the
    replays made; ``None`` when ``steps`` itself is not kept. Each pass sweeps its
    candidates; after a success the next candidate of the smaller script is tried."""
    deadline = time.perf_counter() + seconds
    tries = 1
    run = keeps(steps)
    if run is None:
        return None
    best = steps

    def more() -> bool:
        return time.perf_counter() < deadline and (max_tries is None or tries < max_tries)

    improved = True
    while improved and more():
        improved = False
        for make in passes:
            position = 0
            while more():
                candidates = list(make(best, run))
                if position >= len(candidates):
                    break
                candidate = candidates[position]
                if _size(candidate) >= _size(best):
                    position += 1
                    continue
                tries += 1
                found = keeps(candidate)
                if found is None:
                    position += 1
                    continue
                best, run = candidate, found
                improved = True
    return best, run, tries


def shrink_steps(
    steps: Steps, finding: Finding, replay: Replay, *, seconds: float = 20.0
) -> Shrunk | None:
    """The smallest script that still fails with ``finding``'s name (``None`` when the
    script itself no longer fails on a fresh agent)."""
    findings: dict[int, Finding] = {}
    answered: dict[int, Steps] = {}

    def keeps(candidate: Steps) -> AgentRun | None:
        if candidate and _is_call(candidate[-1]):  # it ran out of turns: answer after them
            candidate = [*candidate, {"reply": "Done."}]
        run, found = replay(candidate)
        if isinstance(run.error, ScriptError) or found is None or found.name != finding.name:
            return None
        findings[id(run)] = found
        answered[id(run)] = candidate
        return run

    result = minimise(steps, keeps, seconds=seconds)
    if result is None:
        return None
    _best, run, tries = result
    return Shrunk(steps=answered[id(run)], run=run, finding=findings[id(run)], tries=tries)
