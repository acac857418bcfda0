"""The loop's constant-factor speed-ups, in one place, each with what it buys.

The rest of the loop is written plainly. What is here earns its place by a measured
figure: ``benchmarks/loop_overhead.py``'s ``run`` at N=1000 in CPU microseconds per
iteration, median of two batches of 3-4 interleaved rounds (15 runs each) on a loaded
2-core machine, Python 3.11, 2026-11-25. With everything here: 16.6-16.8 (the bare
loop: 4.3-4.5). Without one of them, the rest equal:

- **Constructors without ``type.__call__``** (``harness._frozen.maker``) for the six
  records, events and requests the core builds on every iteration: 19.8-21.1 without
  (+20%); and for the ``InjectionContext`` of each strategy hook the core asks
  (2.34 us each through the class, 0.56 with the maker).
  Calling a class with keywords packs them into a dict for ``__init__``; the maker is a
  plain function taking them as they are, and builds the same instance.
- **Result hooks that skip results** (``ResultHooks``): a strategy whose
  ``on_tool_result`` has nothing to do for a result (an error, a plain value) says so
  with a cheap test, and the core builds no ``InjectionContext`` for it: 20.2-21.7
  without (+25%; the benchmark's strategies are ``DeclaredChanges`` and
  ``EntityDiscovery``, both with a test).
- **Tool messages validated without ``BaseModel.__init__``** (``tool_message``): the
  same validation, without the wrapper's keyword handling: 17.0-17.9 without (+5%).

Some live with their classes. ``LoopPhase`` hashes by identity (its members are singletons
compared by identity) for the ``TRANSITIONS`` lookup of every move: 0.3 us less per
iteration in the core alone (9.0-9.1 against 9.3-9.4, ``LoopCore`` driven directly).
In layers that cannot import the loop: ``CallContext.for_call`` builds the per-call
context slot by slot (258 ns instead of 804 through ``__init__``, one per tool call);
``harness/tools/_tool.py`` builds each ``PreparedCall`` and ``ToolResult``, and the
scripted model each ``ModelResponse``, with a maker (17.7 with them, 19.0 without: +7%).

The algorithmic ones live with what they speed up: request bodies encoded once and
decoded incrementally (``harness.models``), tool definitions cached by the toolset; a
result's content scanned for secrets only when its tool has presets or a secret is
registered (``Tool.hidden_from_model``), a turn's ``validation_seconds`` set only when it
differs from the budget in force, the run's starting tools copied only for an active
capture (``observed_run``): each skips work most runs never need. What they buy
together, measured run by run, is in ``benchmarks/NOTES.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness._frozen import maker
from harness.loop import _events, _model, _strategy, _trace
from harness.loop._strategy import InjectionStrategy, hook_strategies
from harness.messages import ToolMessage
from harness.tools import ToolResult

__all__ = [
    "CallRecord",
    "InjectionContext",
    "IterationRecord",
    "IterationStarted",
    "ModelRequest",
    "ModelResponded",
    "ResultHooks",
    "ToolCalled",
    "result_filter",
    "tool_message",
]

tool_message: Callable[[dict[str, Any]], ToolMessage] = (
    ToolMessage.__pydantic_validator__.validate_python
)
"""``ToolMessage(**fields)`` without ``BaseModel.__init__``'s wrapper (validated the same)."""

CallRecord = maker(_trace.CallRecord)
IterationRecord = maker(_trace.IterationRecord)
InjectionContext = maker(_strategy.InjectionContext)
IterationStarted = maker(_events.IterationStarted)
ModelRequest = maker(_model.ModelRequest)
ModelResponded = maker(_events.ModelResponded)
ToolCalled = maker(_events.ToolCalled)


def result_filter(strategy: InjectionStrategy) -> Callable[[ToolResult], bool] | None:
    """The strategy's own cheap test that its ``on_tool_result`` has nothing to do for a
    result (it would return ``None`` without reading anything else), or ``None``.

    A class offers the test as a private ``_nothing_for(result)`` method defined next to
    its ``on_tool_result`` (``DeclaredChanges``, ``EntityDiscovery``): the test is looked
    up in the class that defines the hook, so a subclass overriding the hook gets no
    test from its base and its hook is always called.
    """
    for klass in type(strategy).__mro__:
        if "on_tool_result" in klass.__dict__:
            test = klass.__dict__.get("_nothing_for")
            return test.__get__(strategy) if test is not None else None
    return None  # pragma: no cover - InjectionStrategy defines the hook


class ResultHooks:
    """The ``on_tool_result`` hooks of a strategy (chains flattened, no-op hooks left out),
    and which of them to ask about one result."""

    __slots__ = ("_filtered", "_filters", "strategies")

    def __init__(self, strategy: InjectionStrategy) -> None:
        self.strategies = hook_strategies(strategy, "on_tool_result")
        self._filters = tuple((s, result_filter(s)) for s in self.strategies)
        self._filtered = any(test is not None for _, test in self._filters)

    def for_result(self, result: ToolResult) -> tuple[InjectionStrategy, ...]:
        """The hooks that may change something for ``result`` (the others return ``None``)."""
        if not self._filtered:
            return self.strategies
        listening = []
        for strategy, nothing_for in self._filters:
            if nothing_for is None or not nothing_for(result):
                listening.append(strategy)
        return tuple(listening)
