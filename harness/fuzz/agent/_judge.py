"""Judging one fuzzed run: crashes, hangs, the built-in invariants, the user's properties.

The first problem found is the run's ``Finding``. A run may end in an error and be
fine (the model went over ``max_iterations``, the provider failed): properties judge
it. It is a finding by itself when an injection strategy crashed (``StrategyError``),
the run ended with an error no model behaviour explains (a ``DuplicateToolName`` from
a strategy, an untyped exception), or a call outlasted the fuzzer's watchdog timeout
(the agent set no ``tool_timeout``: in production the run would hang).

``replay_differs`` replays a run's steps on a fresh agent: an agent whose factory
shares state between examples (a module-level world, a counter) does something else
the second time, which makes every counterexample unreliable, so it is a usage error.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from harness._errors import (
    HarnessError,
    LoopSignal,
    ModelBehaviorError,
    ProviderError,
    RunLimitError,
    StrategyError,
    UsageError,
)
from harness._secrets import scrub_message
from harness.fuzz._watchdog import WatchdogTimeout
from harness.fuzz.agent._runs import FuzzedRun
from harness.fuzz.agent._target import FuzzAgent, LoopTarget, Target
from harness.loop import ModelRequest, ModelResponse
from harness.models import ScriptedModel, steps_from_data
from harness.models._scripted._refs import parse_json
from harness.scenarios import check_invariants
from harness.scenarios._agent import Agent, AgentFactory
from harness.scenarios._coverage import name_pattern
from harness.scenarios._properties import AgentRun, Finding, Property, check_properties
from harness.scenarios._wire_agent import RunStalled

__all__ = [
    "EXPECTED_ENDINGS",
    "Finding",
    "judge",
    "judge_fuzzed",
    "no_timeouts",
    "replay",
    "replay_differs",
    "replay_steps",
    "run_shape",
]

EXPECTED_ENDINGS: tuple[type[HarnessError], ...] = (
    ModelBehaviorError,
    RunLimitError,
    ProviderError,
    LoopSignal,
)
"""Errors a run may end with without being a finding: the model's doing (the fuzzer
plays it), a limit, the provider, or the agent's own control flow."""


def no_timeouts(run: AgentRun) -> None:
    """Property: no call ended as a timeout (written into hang counterexamples)."""
    for iteration in run.trace.iterations:
        for call in iteration.calls:
            assert call.error_kind != "timeout", (
                f"tool {call.name!r} (iteration {iteration.index}) did not return in time"
            )


def _describe(error: BaseException) -> str:
    cause = error.__cause__
    text = f"{type(error).__name__}: {error}"
    if cause is not None and str(cause) not in str(error):
        text += f" (caused by {type(cause).__name__}: {cause})"
    return text


def _crash(run: AgentRun, played: bool) -> Finding | None:
    error = run.error
    if error is None or isinstance(error, EXPECTED_ENDINGS):
        return None
    if isinstance(error, UsageError) and not played:
        # before the model's first turn: the agent cannot run at all
        raise UsageError(scrub_message(f"the agent cannot run: {_describe(error)}")) from error
    if isinstance(error, StrategyError):
        return Finding(name="crash", message=f"an injection strategy crashed: {_describe(error)}")
    if isinstance(error, HarnessError):
        return Finding(name="crash", message=f"the run ended with {_describe(error)}")
    return Finding(name="crash", message=f"the run ended with an untyped {_describe(error)}")


def _hang(
    run: AgentRun, watchdog: float | None, stalled: str = "an injection strategy"
) -> Finding | None:
    """A call (or ``stalled``: a strategy hook, or a wire agent's run) the watchdog
    stopped."""
    if watchdog is None:
        return None
    for iteration in run.trace.iterations:
        for call in iteration.calls:
            if isinstance(call.exception, WatchdogTimeout) or call.error_kind == "timeout":
                return Finding(
                    name="hang",
                    message=f"tool {call.name!r} (iteration {iteration.index}) did not return "
                    f"within {watchdog:g}s (the fuzzer's watchdog: the agent sets no "
                    "tool_timeout, so this call would hang its run)",
                )
    error = run.error
    if isinstance(error, RunStalled):
        return Finding(
            name="hang",
            message=f"the agent's run neither called the endpoint nor returned within "
            f"{watchdog:g}s (the fuzzer's watchdog: a tool or the framework hung)",
        )
    if error is not None and _stopped_by_watchdog(error):
        return Finding(
            name="hang",
            message=f"{type(error).__name__}: {stalled} did not return within "
            f"{watchdog:g}s (the fuzzer's watchdog): {error}",
        )
    return None


def _stopped_by_watchdog(error: BaseException) -> bool:
    """The watchdog's exception is the error, or what it came from (an SDK wraps it)."""
    seen: set[int] = set()
    found: BaseException | None = error
    while found is not None and id(found) not in seen:
        if isinstance(found, WatchdogTimeout):
            return True
        seen.add(id(found))
        found = found.__cause__ or found.__context__
    return False


def judge(
    run: AgentRun,
    agent: FuzzAgent,
    properties: Sequence[Property],
    *,
    definitions: Sequence[Any] = (),
    played: bool = True,
    watchdog: float | None = None,
) -> Finding | None:
    """The run's first problem: a hang, a crash, a broken invariant, a failed property.

    ``definitions`` are the tool definitions the model was sent; ``played`` whether the
    model took a turn at all (an error before it means the agent cannot run: a
    ``UsageError``); ``watchdog`` the timeout the fuzzer imposed (``None`` when the
    agent set its own). A property raising anything but ``AssertionError`` raises
    ``UsageError``. An agent on the wire (a ``WireAgent``) is judged by the properties
    and the watchdog only: its framework's own failures (a retry budget spent, an output
    that failed validation) are the run's ``error``, for properties to judge.
    """
    hidden = agent.secret_values()
    if not isinstance(agent, Agent):
        found = _hang(run, watchdog, "the agent's run (its tools or its framework)")
        if found is None:
            return check_properties(run, properties, hidden=hidden)
        return found
    found = _hang(run, watchdog) or _crash(run, played)
    if found is None:
        violations = check_invariants(
            run.trace,
            run.messages,
            error=run.error,
            max_iterations=agent.options.max_iterations,
            secrets=hidden,
            definitions=definitions,
        )
        if violations:
            first = violations[0]
            found = Finding(name=f"invariant:{first.invariant}", message=first.message)
    if found is None:
        return check_properties(run, properties, hidden=hidden)
    # the message quotes the agent's own errors: scrubbed like a tool's error message
    return dataclasses.replace(found, message=scrub_message(found.message, hidden))


def judge_fuzzed(
    fuzzed: FuzzedRun, properties: Sequence[Property], *, watchdog: float | None = None
) -> Finding | None:
    """``judge`` for an example the fuzzer played."""
    return judge(
        fuzzed.run,
        fuzzed.agent,
        properties,
        definitions=fuzzed.definitions,
        played=bool(fuzzed.turns),
        watchdog=watchdog,
    )


class _Recording(ScriptedModel):
    """A scripted model that keeps the distinct tool definitions it was sent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.definitions: list[Any] = []
        self._last: object = None

    def request(self, request: ModelRequest) -> ModelResponse:
        if request.tools is not self._last:
            self._last = request.tools
            self.definitions.extend(request.tools)
        return super().request(request)


def replay(
    target: Target, steps: list[dict[str, Any]], *, watchdog: float | None = None
) -> tuple[AgentRun, FuzzAgent, list[Any], bool]:
    """Run ``steps`` on a fresh agent of ``target``: the run, the agent, the definitions
    sent, and whether the model took a turn; ``watchdog`` arms the signal watchdog."""
    agent = target.build()
    model = _Recording(steps_from_data(steps), name="replay")
    run = target.play(agent, model, watchdog=watchdog)
    return run, agent, model.definitions, bool(model.requests)


def replay_steps(
    factory: AgentFactory,
    steps: list[dict[str, Any]],
    *,
    name: str,
    defaults: Mapping[str, Any],
    watchdog: float | None = None,
) -> tuple[AgentRun, FuzzAgent, list[Any], bool]:
    """``replay`` for an agent factory on the harness's loop."""
    return replay(LoopTarget(factory, name, defaults), steps, watchdog=watchdog)


_WORD = re.compile(r"[A-Za-z0-9_-]+")
_VOLATILE = re.compile(r"\d|[0-9a-fA-F]{6}|(?:^|[-_])[0-9a-fA-F]{4,}(?:[-_]|$)")
"""Words made per run have a digit (``ord-3f2a9c``), six hex letters in a row, or a
part of four hex letters or more (``sku-ddfcb``: a fresh id whose digits all happened
to be letters)."""


def _mask(text: str) -> str:
    return _WORD.sub(lambda m: "#" if _VOLATILE.search(m.group()) else m.group(), text)


def _skeleton(value: Any) -> Any:
    """A result with its numbers and the digits of its texts masked: fresh ids and
    random amounts differ from run to run, the structure (keys, lengths) must not."""
    if isinstance(value, dict):
        return {k: _skeleton(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_skeleton(v) for v in value]
    if isinstance(value, str):
        return _mask(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return 0
    return value


def _shape(run: AgentRun) -> list[Any]:
    rows: list[Any] = []
    for iteration in run.trace.iterations:
        calls = [
            (name_pattern(c.name), c.is_error, _skeleton(parse_json(c.content)))
            for c in iteration.calls
        ]
        rows.append((sorted(name_pattern(n) for n in iteration.offered), calls))
    rows.append(type(run.error).__name__ if run.error is not None else "finished")
    return rows


def _first_difference(a: list[Any], b: list[Any]) -> str:
    for index, (left, right) in enumerate(zip(a, b, strict=False), start=1):
        if left != right:
            if isinstance(left, str) or isinstance(right, str):
                return f"the run ended differently: {left} then {right}"
            return (
                f"iteration {index} differs: {json.dumps(left, default=str)[:200]} "
                f"then {json.dumps(right, default=str)[:200]}"
            )
    return f"{len(a) - 1} iteration(s) then {len(b) - 1}"


def run_shape(run: AgentRun) -> list[Any]:
    """What a replay of ``run`` must repeat: per request the tools offered, and each
    call's tool, outcome and result with its numbers and ids masked; how it ended."""
    return _shape(run)


def replay_differs(
    target: Target,
    steps: list[dict[str, Any]],
    shape: list[Any],
    *,
    watchdog: float | None = None,
) -> str | None:
    """Replay ``steps`` on a fresh agent: how its run differs from ``shape`` (the
    ``run_shape`` of the run they came from), or ``None``."""
    again, _agent, _definitions, _played = replay(target, steps, watchdog=watchdog)
    second = _shape(again)
    if shape == second:
        return None
    return _first_difference(shape, second)
