"""The out-of-band call context: values a tool receives that the model never sees."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from harness._errors import CompletionError, UsageError
from harness.tools._inject import ContextObjects, InjectedParam, resolve_injected
from harness.tools._objects import Emitter, ProgressSink

if TYPE_CHECKING:
    from harness.tools._completion import Completion, CompletionSink

__all__ = ["CallContext"]

_T = TypeVar("_T")


class CallContext(Mapping[str, Any]):
    """Key/value context injected into tools whose parameter is annotated ``CallContext``.

    Values come from the run (``run(..., context=...)``) and from the call
    (``call_context=`` hook); call-level values win on conflict. The context also
    carries the run's shared state (``state``, a mutable "blackboard" dict), where the
    call happens, the typed context objects of the call, the run and the toolset
    (``lookup``; see docs/context-injection.md) and the call's progress ``emitter``.
    Values never appear in a schema, a message or a repr.
    """

    __slots__ = (
        "_completions",
        "_emitter",
        "_layers",
        "_loop_id",
        "_sink",
        "_values",
        "iteration",
        "run_id",
        "state",
        "tool_call_id",
        "tool_name",
    )

    def __init__(
        self,
        values: Mapping[str, Any] | None = None,
        *,
        state: dict[str, Any] | None = None,
        run_id: str = "",
        iteration: int = 0,
        tool_name: str = "",
        tool_call_id: str = "",
        loop_id: str = "",
        objects: ContextObjects | None = None,
        progress: ProgressSink | None = None,
        completions: CompletionSink | None = None,
    ) -> None:
        self._values: dict[str, Any] = dict(values or {})
        self._layers: tuple[ContextObjects | None, ...] = (None, objects, None)
        """Typed context objects of the call, the run and the toolset (highest first)."""
        self._sink = progress
        self._emitter: Emitter | None = None
        self._loop_id = loop_id
        self._completions = completions
        self.state: dict[str, Any] = state if state is not None else {}
        """Shared mutable state for the whole run (the blackboard)."""
        self.run_id = run_id
        """Identity of the run (never used as the loop id: see ``loop_id``)."""
        self.iteration = iteration
        """The loop iteration of this call (1-based; 0 outside a run)."""
        self.tool_name = tool_name
        """The tool being called."""
        self.tool_call_id = tool_call_id
        """The id of the call being executed."""

    @property
    def loop_id(self) -> str:
        """The loop identity: the ``loop_id`` value if set, else the loop the tool runs in
        (the loop sets it to its run id); ``""`` when neither says (e.g. a call made
        outside a loop). It never falls back to ``run_id``."""
        value = self._values.get("loop_id")
        return str(value) if value is not None else self._loop_id

    def for_call(
        self,
        *,
        tool_name: str,
        tool_call_id: str,
        iteration: int,
        values: Mapping[str, Any] | None = None,
        objects: ContextObjects | None = None,
        toolset_objects: ContextObjects | None = None,
    ) -> CallContext:
        """A copy for one call, with call-level ``values`` overriding run-level ones.

        ``objects`` are the call's typed context objects and ``toolset_objects`` those of
        the toolset the tool is offered from (see ``context_layers``).
        """
        # Built slot by slot, not through ``__init__`` (one per tool call, on the loop's
        # hot path): 258 ns instead of 804 (the keyword handling and a copy of the values;
        # contexts never change their ``_values``, so sharing the run's dict is safe).
        # The loop's speed-ups and what each buys: harness/loop/_fast.py.
        context = CallContext.__new__(CallContext)
        context._values = {**self._values, **values} if values else self._values
        context._layers = (objects, self._layers[1], toolset_objects)
        context._sink = self._sink
        context._emitter = None
        context._loop_id = self._loop_id
        context._completions = self._completions
        context.state = self.state
        context.run_id = self.run_id
        context.iteration = iteration
        context.tool_name = tool_name
        context.tool_call_id = tool_call_id
        return context

    def context_layers(
        self, tool: ContextObjects | None = None
    ) -> tuple[ContextObjects | None, ...]:
        """Typed context objects by source, highest priority first: the call, the run, the
        toolset, then ``tool``'s own."""
        return (*self._layers, tool)

    def lookup(self, cls: type[_T]) -> _T | None:
        """The context object for ``cls`` from the call, the run or the toolset (the same
        rules as an annotated parameter; for schema and typed tools, which have no
        signature to annotate); ``None`` when none is registered. Several matches in one
        source raise ``UsageError``."""
        if cls is Emitter:
            return self.emitter  # type: ignore[return-value]
        found, obj, problem = resolve_injected(
            self.tool_name or "?", InjectedParam("lookup", cls, True), self._layers
        )
        if problem is not None:
            raise UsageError(problem)
        return obj if found else None  # type: ignore[return-value]

    @property
    def emitter(self) -> Emitter:
        """The progress ``Emitter`` of this call (made on first use)."""
        if self._emitter is None:
            self._emitter = Emitter(
                call_id=self.tool_call_id, tool_name=self.tool_name, sink=self._sink
            )
        return self._emitter

    @property
    def completion(self) -> Completion:
        """The completion callback of this call, for a tool returning
        ``ToolResult.started(...)``: call it once with the finished result, from any thread
        or asyncio task; the loop delivers it at the next turn. Raises ``CompletionError``
        outside a run (no loop to report back to)."""
        from harness.tools._completion import Completion

        if self._completions is None or not self.tool_call_id:
            raise CompletionError(
                f"no completion callback: this call context ({self!r}) is not part of a "
                "run's tool call; run the tool through harness.run/arun to report back later"
            )
        return Completion(
            self._completions,
            call_id=self.tool_call_id,
            tool_name=self.tool_name,
            hidden=self._values.values(),
        )

    def report_back(self, result: Any) -> None:
        """Shortcut for ``self.completion(result)``."""
        self.completion(result)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        keys = ", ".join(sorted(self._values))
        return f"CallContext(keys=[{keys}], tool={self.tool_name!r}, iteration={self.iteration})"
