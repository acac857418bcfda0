"""Tool chaining: the ``@llm_tool`` methods of a domain type act on the last instance returned.

Registered types get placeholder tools from the first turn on ("not available yet:
call a tool that returns a <Type> first"); when a tool returns a single instance,
the placeholders are replaced by tools bound to it (the last instance wins). In auto
mode any returned object with ``@llm_tool`` methods exposes them, and a new object
replaces the previous bindings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from harness._errors import UsageError
from harness.injection._stub import stub_of
from harness.loop import Event, InjectionContext, InjectionStrategy, StrategyWarning, ToolsetChange
from harness.tools import Tool, as_tool, tool_methods

__all__ = ["ChainedType", "ToolChaining"]

Predicate = Callable[[Any, InjectionContext], bool]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ChainedType:
    """A registered domain type."""

    cls: type
    """The type whose ``@llm_tool`` methods become tools."""
    predicate: Predicate | None = None
    """``predicate(instance, context)``: only instances it accepts bind."""

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The tool names of its methods."""
        return tuple(spec.name for _, spec in tool_methods(self.cls))

    def placeholders(self) -> list[Tool]:
        """Tools answering "not available yet" until an instance is bound."""
        message = f"not available yet: call a tool that returns a {self.cls.__name__} first"
        out: list[Tool] = []
        for _, spec in tool_methods(self.cls):
            shape = Tool(
                name=spec.name,
                description=spec.description,
                parameters=spec.args_schema.json_schema,
                handler=_unbound,
            )
            out.append(stub_of(shape, message, chained_type=self.cls.__name__, placeholder=True))
        return out


def _unbound(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - stubs never run it
    raise RuntimeError("placeholder")


def _bound_tools(instance: Any, label: str) -> list[Tool]:
    return [
        as_tool(getattr(instance, attr)).with_metadata(chained_type=label)
        for attr, _ in tool_methods(type(instance))
    ]


class ToolChaining(InjectionStrategy):
    """Domain tools by type: placeholders first, then tools bound to the last instance.

    Args:
        types: types (or ``ChainedType``s) whose ``@llm_tool`` methods are chained.
        auto: also expose the ``@llm_tool`` methods of *any* returned object; a new
            object replaces all previous automatic bindings.
    """

    def __init__(self, types: Iterable[type | ChainedType] = (), *, auto: bool = False) -> None:
        self.types: list[ChainedType] = []
        self.auto = auto
        for item in types:
            if isinstance(item, ChainedType):
                self.register(item.cls, predicate=item.predicate)
            else:
                self.register(item)

    @property
    def name(self) -> str:
        return "chaining"

    def register(self, cls: type, *, predicate: Predicate | None = None) -> ToolChaining:
        """Chain ``cls``; ``predicate(instance, context)`` filters which instances bind."""
        if not isinstance(cls, type):
            raise UsageError(f"ToolChaining.register needs a class, got {cls!r}")
        if not tool_methods(cls):
            raise UsageError(
                f"ToolChaining: {cls.__qualname__} has no @llm_tool methods; decorate the "
                "methods the model may call with @llm_tool"
            )
        if predicate is not None and not callable(predicate):
            raise UsageError(
                f"ToolChaining: predicate for {cls.__qualname__} must be a function "
                f"(instance, context) -> bool, got {predicate!r}"
            )
        entry = ChainedType(cls=cls, predicate=predicate)
        taken = {n: t.cls.__qualname__ for t in self.types for n in t.tool_names}
        clash = sorted(n for n in entry.tool_names if n in taken)
        if clash:
            owners = sorted({taken[n] for n in clash})
            raise UsageError(
                f"ToolChaining: {cls.__qualname__} has tools {clash} already registered by "
                f"{owners}; give the methods distinct names (llm_tool(name=...))"
            )
        self.types.append(entry)
        return self

    # -- hooks --------------------------------------------------------------------------

    def before_turn(self, context: InjectionContext) -> ToolsetChange | None:
        state = context.state_for(self)
        if state.get("started") or not self.types:
            return None
        state["started"] = True
        add: list[Tool] = []
        events: list[Event] = []
        for entry in self.types:
            for tool in entry.placeholders():
                if tool.name in context.tools:
                    events.append(
                        self._warn(
                            context,
                            f"placeholder {tool.name!r} not added: "
                            "a tool with that name is already offered",
                        )
                    )
                else:
                    add.append(tool)
        state["owned"] = {t.name for t in add}
        types = ", ".join(t.cls.__name__ for t in self.types)
        return ToolsetChange(
            add=tuple(add),
            reason=f"registered types {types}: placeholders until a tool returns one",
            events=tuple(events),
        )

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        result = context.result
        if result is None or result.is_error or result.value is None:
            return None
        value = result.value
        if isinstance(value, type):
            return None
        state = context.state_for(self)
        bound: dict[type, Any] = state.setdefault("bound", {})
        source = context.call.name if context.call else "?"
        for entry in self.types:
            if isinstance(value, entry.cls):
                if entry.predicate is not None and not entry.predicate(value, context):
                    return None
                if bound.get(entry.cls) is value:
                    return None
                bound[entry.cls] = value
                owned: set[str] = state.get("owned", set())
                tools = [t for t in _bound_tools(value, entry.cls.__name__) if t.name in owned]
                if not tools:
                    return None
                return ToolsetChange(
                    replace=tuple(tools),
                    reason=(
                        f"{source} returned a {entry.cls.__name__}: "
                        f"{', '.join(t.name for t in tools)} now act on it (last instance wins)"
                    ),
                )
        if self.auto and tool_methods(type(value)):
            return self._auto(context, value, source, state)
        return None

    def _auto(
        self, context: InjectionContext, value: Any, source: str, state: dict[str, Any]
    ) -> ToolsetChange | None:
        if state.get("auto_object") is value:
            return None
        previous: list[str] = state.get("auto_names", [])
        label = type(value).__name__
        add: list[Tool] = []
        events: list[Event] = []
        for tool in _bound_tools(value, label):
            if tool.name in context.tools and tool.name not in previous:
                events.append(
                    self._warn(
                        context,
                        f"{label}.{tool.name} not exposed: a tool named "
                        f"{tool.name!r} is already offered",
                    )
                )
            else:
                add.append(tool)
        state["auto_object"] = value
        state["auto_names"] = [t.name for t in add]
        reason = f"{source} returned a {label}: exposing {', '.join(t.name for t in add)}"
        if previous:
            reason += f" (replacing the tools of the previous object: {', '.join(previous)})"
        return ToolsetChange(
            remove=tuple(previous), add=tuple(add), reason=reason, events=tuple(events)
        )

    def _warn(self, context: InjectionContext, message: str) -> StrategyWarning:
        return StrategyWarning(iteration=context.iteration, strategy=self.name, message=message)
