"""``run`` and ``arun``: thin drivers that do the I/O for the sans-IO core."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from harness._errors import UsageError
from harness.loop._capture import observed_run, resolve_model
from harness.loop._core import LoopCore
from harness.loop._events import Observer
from harness.loop._execution import abandoned_events, execute_async, execute_sync
from harness.loop._history import check_history
from harness.loop._model import Model, ModelCapabilities
from harness.loop._options import LoopOptions, options_from
from harness.loop._phases import LoopPhase
from harness.loop._result import RunResult
from harness.loop._strategy import DeclaredChanges, InjectionStrategy, StrategyChain
from harness.messages import Message, SystemMessage, UserMessage
from harness.tools import Tool, Toolset

__all__ = [
    "adrive",
    "arun",
    "build_core",
    "default_strategy",
    "drive",
    "observed",
    "run",
]

Prompt = str | Sequence[Message]
Tools = Toolset | Iterable[Tool | Callable[..., Any]]


def _initial_messages(prompt: Prompt | None, system: str | None) -> list[Message]:
    if prompt is None:  # a session before its first user turn
        return [SystemMessage(content=system)] if system else []
    if isinstance(prompt, str):
        messages: list[Message] = [SystemMessage(content=system)] if system else []
        messages.append(UserMessage(content=prompt))
        return messages
    if system is not None:
        raise UsageError("pass system= only with a text prompt; put a SystemMessage in the list")
    messages = list(prompt)
    if not messages:
        raise UsageError("the prompt is empty: pass a text or a non-empty list of messages")
    check_history(messages, where="the prompt's messages")
    return messages


def _parts(core: LoopCore) -> tuple[tuple[Tool, ...], tuple[InjectionStrategy, ...]]:
    """The tools a run starts with and its strategies (what ``capture_run`` keeps)."""
    chain = core.strategy
    strategies = chain.strategies if isinstance(chain, StrategyChain) else (chain,)
    return tuple(core.toolset), strategies


def default_strategy(strategies: Sequence[InjectionStrategy] | None) -> InjectionStrategy:
    """The chain: declared changes (self-expanding tools) first, then ``strategies``."""
    chain: list[InjectionStrategy] = [DeclaredChanges()]
    for strategy in strategies or ():
        if not isinstance(strategy, InjectionStrategy):
            raise UsageError(
                f"strategies must be InjectionStrategy instances, got {strategy!r}; "
                "subclass harness.InjectionStrategy"
            )
        if not isinstance(strategy, DeclaredChanges):
            chain.append(strategy)
    return StrategyChain(chain)


def build_core(
    prompt: Prompt | None,
    *,
    tools: Tools = (),
    strategies: Sequence[InjectionStrategy] | None = None,
    system: str | None = None,
    options: LoopOptions | None = None,
    observers: Sequence[Observer] = (),
    state: dict[str, Any] | None = None,
    option_overrides: Mapping[str, Any] | None = None,
    capabilities: ModelCapabilities | None = None,
) -> LoopCore:
    """Assemble a ``LoopCore`` from ``run``'s arguments (``prompt=None``: no user message
    yet, as a ``Session`` before its first turn)."""
    if options is None:
        options = options_from(option_overrides or {})
    elif option_overrides:
        raise UsageError("pass either options= or keyword options, not both")
    toolset = tools.copy() if isinstance(tools, Toolset) else Toolset.of(tools)
    return LoopCore(
        messages=_initial_messages(prompt, system),
        toolset=toolset,
        strategy=default_strategy(strategies),
        options=options,
        observers=observers,
        state=state,
        capabilities=capabilities,
    )


@contextlib.contextmanager
def _ending(core: LoopCore, model: Model) -> Iterator[None]:
    """On any error: attach the trace to it and tell the model the run ended unfinished."""
    try:
        yield
    except BaseException as exc:
        core.abort(exc)
        if not core.finished:  # end_run(completed=True) itself may be what raised
            model.end_run(completed=False)
        raise


@contextlib.contextmanager
def observed(core: LoopCore, model: Model) -> Iterator[Callable[[RunResult], None]]:
    """A run (or a session's turn) as the active captures see it, its errors carrying the
    trace (``_ending``): yields the function that reports its result."""
    with (
        observed_run(
            lambda: list(core.messages), lambda: core.trace, lambda: _parts(core)
        ) as finished,
        _ending(core, model),
    ):
        yield finished


@contextlib.contextmanager
def _lazy_pool(max_workers: int) -> Iterator[Callable[[], ThreadPoolExecutor]]:
    """A thread pool created on first use (parallel calls only) and shut down after."""
    executor: ThreadPoolExecutor | None = None

    def pool() -> ThreadPoolExecutor:
        nonlocal executor
        if executor is None:
            executor = ThreadPoolExecutor(max_workers, "harness-loop")
        return executor

    try:
        yield pool
    finally:
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


def run(
    model: Model,
    prompt: Prompt,
    *,
    tools: Tools = (),
    strategies: Sequence[InjectionStrategy] | None = None,
    system: str | None = None,
    options: LoopOptions | None = None,
    observers: Sequence[Observer] = (),
    state: dict[str, Any] | None = None,
    **option_overrides: Any,
) -> RunResult:
    """Run the tool loop synchronously until the model answers without tool calls.

    ``strategies`` run after ``DeclaredChanges``, which is always first: changes a
    tool declares in its own result (a facade unfolding) apply even with
    ``strategies=[]``. Keyword options (``max_iterations=``, ``tool_timeout=``, ...)
    are those of ``LoopOptions``. Errors raised out of the run carry ``trace`` and ``messages``.
    Inside ``override_model(...)`` the overriding model is used instead of ``model``.
    """
    model = resolve_model(model)
    core = build_core(
        prompt,
        tools=tools,
        strategies=strategies,
        system=system,
        options=options,
        observers=observers,
        state=state,
        option_overrides=option_overrides,
        capabilities=model.capabilities,
    )
    with observed(core, model) as finished:
        result = drive(core, model)
        model.end_run(completed=True)
        finished(result)
    return result


def drive(core: LoopCore, model: Model) -> RunResult:
    """Run ``core`` (phase ``ready``) with ``model`` until the turn's answer: the sync I/O."""
    with _lazy_pool(core.options.max_workers) as pool:
        while not core.finished:
            if core.phase is LoopPhase.AWAITING_COMPLETIONS:  # async tools still running
                core.completions.wait()
                core.settle_completions()
                continue
            response = model.request(core.begin_iteration())
            pending = core.receive_response(response)
            if pending:
                outcomes = execute_sync(pending, core.options, pool)
                for event in abandoned_events(pending, outcomes, core.iteration):
                    core.emit(event)
                core.receive_results(outcomes)
    return core.result()


async def arun(
    model: Model,
    prompt: Prompt,
    *,
    tools: Tools = (),
    strategies: Sequence[InjectionStrategy] | None = None,
    system: str | None = None,
    options: LoopOptions | None = None,
    observers: Sequence[Observer] = (),
    state: dict[str, Any] | None = None,
    **option_overrides: Any,
) -> RunResult:
    """Async ``run``: async tools are awaited, parallel calls run concurrently."""
    model = resolve_model(model)
    core = build_core(
        prompt,
        tools=tools,
        strategies=strategies,
        system=system,
        options=options,
        observers=observers,
        state=state,
        option_overrides=option_overrides,
        capabilities=model.capabilities,
    )
    with observed(core, model) as finished:
        result = await adrive(core, model)
        model.end_run(completed=True)
        finished(result)
    return result


async def adrive(core: LoopCore, model: Model) -> RunResult:
    """Async ``drive``: async tools are awaited, parallel calls run concurrently."""
    while not core.finished:
        if core.phase is LoopPhase.AWAITING_COMPLETIONS:  # async tools still running
            await core.completions.wait_async()
            core.settle_completions()
            continue
        response = await model.arequest(core.begin_iteration())
        pending = core.receive_response(response)
        if pending:
            outcomes = await execute_async(pending, core.options)
            for event in abandoned_events(pending, outcomes, core.iteration):
                core.emit(event)
            core.receive_results(outcomes)
    return core.result()
