"""The out-of-band call context: values a tool receives that the model never sees."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["CallContext"]


class CallContext(Mapping[str, Any]):
    """Key/value context injected into tools whose parameter is annotated ``CallContext``.

    Values come from the run (``run(..., context=...)``) and from the call
    (``call_context=`` hook); call-level values win on conflict. The context also
    carries the run's shared state (``state``, a mutable "blackboard" dict) and
    where the call happens. Values never appear in a schema, a message or a repr.
    """

    __slots__ = (
        "_loop_id",
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
    ) -> None:
        self._values: dict[str, Any] = dict(values or {})
        self._loop_id = loop_id
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
    ) -> CallContext:
        """A copy for one call, with call-level ``values`` overriding run-level ones."""
        # built field by field (one per call, on the loop's hot path): ``__init__`` would
        # copy the values again; contexts never change their ``_values``, so sharing the
        # run's dict is safe
        context = CallContext.__new__(CallContext)
        context._values = {**self._values, **values} if values else self._values
        context._loop_id = self._loop_id
        context.state = self.state
        context.run_id = self.run_id
        context.iteration = iteration
        context.tool_name = tool_name
        context.tool_call_id = tool_call_id
        return context

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        keys = ", ".join(sorted(self._values))
        return f"CallContext(keys=[{keys}], tool={self.tool_name!r}, iteration={self.iteration})"
