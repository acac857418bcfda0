"""Seeing and steering runs made by code under test: ``capture_run`` and ``override_model``.

Both are context managers backed by context variables, so they follow the code that
runs inside them (nested calls, ``asyncio`` tasks) without the code under test
passing anything along. Threads started inside do not inherit them unless they copy
the context (``contextvars.copy_context().run``), as with any context variable.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from harness._errors import UsageError
from harness.loop._model import Model
from harness.loop._result import RunResult
from harness.loop._trace import Trace
from harness.messages import Message

__all__ = [
    "CapturedRun",
    "RunCapture",
    "active_override",
    "capture_run",
    "override_model",
    "resolve_model",
]


@dataclasses.dataclass(frozen=True, kw_only=True)
class CapturedRun:
    """One run seen by ``capture_run``: its trace and history, and how it ended."""

    trace: Trace
    """The run's trace (complete, or up to the error)."""
    messages: list[Message]
    """The history as the run left it."""
    result: RunResult | None
    """The result, when the run finished."""
    error: BaseException | None
    """The exception that ended the run, when it did not finish."""
    depth: int
    """0 for a run started directly inside the capture; 1 and more for runs nested in
    a tool of another run (agentic tools, subagents)."""
    tools: tuple[Any, ...] = ()
    """The tools the run started with (``Tool`` objects), for injection coverage."""
    strategies: tuple[Any, ...] = ()
    """The run's injection strategies, in chain order, for injection coverage."""


class RunCapture:
    """The runs made inside one ``capture_run`` block, in the order they ended."""

    def __init__(self, *, base_depth: int = 0) -> None:
        self.base_depth = base_depth
        """How deeply nested in runs the block itself was opened (depths are relative)."""
        self.all_runs: list[CapturedRun] = []
        """Every run, nested ones included, in the order they ended."""

    @property
    def runs(self) -> list[CapturedRun]:
        """The runs started directly inside the block (not nested in another run)."""
        return [r for r in self.all_runs if r.depth == 0]

    @property
    def last(self) -> CapturedRun:
        """The most recent top-level run; ``UsageError`` when none was made."""
        runs = self.runs
        if not runs:
            raise UsageError(
                "no run was made inside capture_run(); the code under test must call "
                "harness.run/arun (or a run_with_sections) inside the `with` block"
            )
        return runs[-1]

    @property
    def traces(self) -> list[Trace]:
        """The traces of the top-level runs, in order."""
        return [r.trace for r in self.runs]

    def __len__(self) -> int:
        return len(self.runs)

    def __iter__(self) -> Iterator[CapturedRun]:
        return iter(self.runs)

    def __repr__(self) -> str:
        return f"<RunCapture {len(self.runs)} run(s), {len(self.all_runs)} with nested>"


_captures: contextvars.ContextVar[tuple[RunCapture, ...]] = contextvars.ContextVar(
    "harness_captures", default=()
)
_run_depth: contextvars.ContextVar[int] = contextvars.ContextVar("harness_run_depth", default=0)
_model_override: contextvars.ContextVar[Callable[[Model], Model] | None] = contextvars.ContextVar(
    "harness_model_override", default=None
)


@contextlib.contextmanager
def capture_run() -> Iterator[RunCapture]:
    """Collect every run (trace and messages) made inside the block, finished or failed.

    ``with capture_run() as captured: my_agent.ask("...")`` then
    ``assert captured.last.trace == injected("customer_*")``: the code under test need
    not return its result. Blocks nest; each sees the runs made inside it.
    """
    capture = RunCapture(base_depth=_run_depth.get())
    token = _captures.set((*_captures.get(), capture))
    try:
        yield capture
    finally:
        _captures.reset(token)


@contextlib.contextmanager
def override_model(model: Model | Callable[[Model], Model]) -> Iterator[None]:
    """Inside the block, every ``run``/``arun`` uses ``model`` instead of the one it was given.

    Pass a ``Model`` to swap it outright (``with override_model(ScriptedModel([...])):``),
    or a function of the original model to wrap it. The code under test is unchanged.
    """
    if isinstance(model, Model):
        replacement = model

        def swap(_original: Model) -> Model:
            return replacement

        factory: Callable[[Model], Model] = swap
    elif callable(model):
        factory = model
    else:
        raise UsageError(
            f"override_model() takes a harness Model or a function of the original model, "
            f"got {model!r}"
        )
    token = _model_override.set(factory)
    try:
        yield
    finally:
        _model_override.reset(token)


def active_override() -> Callable[[Model], Model] | None:
    """The function the innermost ``override_model`` block applies to each run's model
    (``None`` outside any): for wrappers that compose with it (``harness.cost``)."""
    return _model_override.get()


def resolve_model(model: Model) -> Model:
    """The model a run must use: ``model``, or the active ``override_model``'s choice."""
    factory = _model_override.get()
    if factory is None:
        return model
    chosen = factory(model)
    if not isinstance(chosen, Model):
        raise UsageError(f"the override_model() function returned {chosen!r}, not a harness Model")
    return chosen


@contextlib.contextmanager
def observed_run(
    messages: Callable[[], list[Message]],
    trace: Callable[[], Trace],
    parts: Callable[[], tuple[tuple[Any, ...], tuple[Any, ...]]] = lambda: ((), ()),
) -> Iterator[Callable[[RunResult], None]]:
    """Bracket one run for the active captures: yields the function that reports success;
    an exception leaving the block is reported as the run's end (and re-raised).
    ``parts()`` gives the run's starting tools and its strategies (taken now, and only
    when a capture is active: a run nobody captures copies no tool list)."""
    captures = _captures.get()
    tools, strategies = parts() if captures else ((), ())
    depth = _run_depth.get()
    token = _run_depth.set(depth + 1)
    reported = False

    def finished(result: RunResult) -> None:
        nonlocal reported
        reported = True
        for capture in captures:
            capture.all_runs.append(
                CapturedRun(
                    trace=result.trace,
                    messages=result.messages,
                    result=result,
                    error=None,
                    depth=depth - capture.base_depth,
                    tools=tools,
                    strategies=strategies,
                )
            )

    try:
        yield finished
    except BaseException as exc:
        if not reported:
            for capture in captures:
                capture.all_runs.append(
                    CapturedRun(
                        trace=trace(),
                        messages=messages(),
                        result=None,
                        error=exc,
                        depth=depth - capture.base_depth,
                        tools=tools,
                        strategies=strategies,
                    )
                )
        raise
    finally:
        _run_depth.reset(token)
