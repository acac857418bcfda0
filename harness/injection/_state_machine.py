"""A state machine strategy: the offered tools follow the run's current state.

States come from an ``Enum``; each state has its tools, a tool's successful call can
move the run to another state, global tools are offered in every state. Every
transition is recorded in the trace as a ``StateTransition`` event (and as a
``ChangeRecord`` when the toolset changes).
"""

from __future__ import annotations

import dataclasses
import enum
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from harness._errors import UnreachableStateWarning, UsageError
from harness.injection._delivery import Delivery, Via
from harness.injection._state_turns import StateBoundTool, TurnGuard
from harness.loop import Event, InjectionContext, InjectionStrategy, StrategyWarning, ToolsetChange
from harness.tools import Tool, as_tool
from harness.tools._names import snake_case

__all__ = ["StateMachine", "StateTransition"]

ToolLike = Tool | Callable[..., Any]
Target = enum.Enum | Callable[[Any], enum.Enum | None]
"""A transition target: a state, or a function of the tool's return value giving one (or None)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StateTransition(Event):
    """The state machine entered a state (``from_state`` is ``None`` when the run starts)."""

    machine: str
    """The state machine's name."""
    from_state: str | None
    """The state left, by name."""
    to_state: str
    """The state entered, by name."""
    tool: str | None = None
    """The tool whose successful call caused the transition."""


class StateMachine(InjectionStrategy):
    """Offer the tools of the current state (plus global tools); move on tool success.

    ``tools`` maps each state to its tools; ``transitions`` maps a tool name to the
    state its successful call leads to (or to a function of the tool's return value
    giving the state, or ``None`` to stay). A run starts in ``start`` (for a resumed
    run) or ``initial``; a value already in the run's shared state under
    ``state_key`` wins over both. A call to a tool of another state gets an error
    result naming the current state and the states where the tool works. Of several
    calls in one turn, a call runs only when its tool is offered in every state the
    earlier ones may lead to (``_state_turns.py``); the others are answered with a
    ``state_changed`` error result, unrun. ``via`` is how a new state's tools reach the
    model: ``edit`` (declared in ``tools``) or ``addition`` (the provider's
    mid-conversation addition; an edit where the model has none), or a ``Delivery``; the
    tools a state leaves behind are removed from ``tools`` either way.
    """

    def __init__(
        self,
        states: type[enum.Enum],
        *,
        initial: enum.Enum,
        tools: Mapping[enum.Enum, Iterable[ToolLike]],
        transitions: Mapping[str, Target] | None = None,
        global_tools: Iterable[ToolLike] = (),
        start: enum.Enum | None = None,
        state_key: str = "state_machine",
        name: str | None = None,
        announce: bool = True,
        via: Via | Delivery = "edit",
    ) -> None:
        self.delivery = Delivery.of(via, name="StateMachine via")
        if not (isinstance(states, type) and issubclass(states, enum.Enum)):
            raise UsageError(f"states must be an Enum class, got {states!r}")
        self.states = states
        self._name = name or f"state_machine:{snake_case(states.__name__)}"
        self.state_key = state_key
        self.announce = announce
        problems: list[str] = []
        self.initial = self._member(initial, "initial", problems)
        self.start = self._member(start, "start", problems) if start is not None else None
        self.global_tools = tuple(as_tool(t) for t in global_tools)
        self.tools: dict[enum.Enum, tuple[Tool, ...]] = {s: () for s in states}
        by_name: dict[str, Tool] = {t.name: t for t in self.global_tools}
        for key, items in tools.items():
            state = self._member(key, "a key of tools", problems)
            if state is None:
                continue
            converted = tuple(as_tool(t) for t in items)
            for tool in converted:
                known = by_name.setdefault(tool.name, tool)
                if known is not tool and known.handler != tool.handler:
                    problems.append(f"two different tools are named {tool.name!r}; rename one")
            self.tools[state] = converted
        global_names = {t.name for t in self.global_tools}
        for state, state_tools in self.tools.items():
            for tool in state_tools:
                if tool.name in global_names:
                    problems.append(
                        f"tool {tool.name!r} is global and also listed for state {state.name}; "
                        "global tools are offered in every state, list it once"
                    )
        self.transitions: dict[str, Target] = {}
        for tool_name, target in (transitions or {}).items():
            if tool_name not in by_name:
                problems.append(
                    f"transition for unknown tool {tool_name!r}; tools: {sorted(by_name)}"
                )
            elif not callable(target) or isinstance(target, enum.Enum):
                self._member(target, f"the target of {tool_name!r}", problems)
            self.transitions[tool_name] = target
        if problems:
            raise UsageError(f"invalid state machine {self._name}: " + "; ".join(problems))
        self._all_names = frozenset(by_name)
        guard = TurnGuard(
            machine=self._name,
            offered_in={s: frozenset(t.name for t in self.tools_for(s)) for s in states},
            targets={
                name: frozenset({target} if isinstance(target, enum.Enum) else states)
                for name, target in self.transitions.items()
            },
            current=self.current,
        )
        self._bound = {name: StateBoundTool.wrap(t, guard=guard) for name, t in by_name.items()}
        """What the machine offers: its tools, bound to its one-turn rule (_state_turns.py)."""
        assert self.initial is not None
        unreachable = [s.name for s in states if s not in self.reachable_from(self.initial)]
        if unreachable:
            warnings.warn(
                UnreachableStateWarning(
                    f"state machine {self._name}: state(s) {unreachable} cannot be reached from "
                    f"the initial state {self.initial.name}; add a transition to them "
                    "or remove them"
                ),
                stacklevel=2,
            )

    @property
    def name(self) -> str:
        return self._name

    def _member(self, value: Any, what: str, problems: list[str]) -> enum.Enum | None:
        if isinstance(value, self.states):
            return value
        problems.append(
            f"{what} must be a member of {self.states.__name__}, got {value!r}; "
            f"states: {[s.name for s in self.states]}"
        )
        return None

    # -- the graph ------------------------------------------------------------------------

    def targets(self, state: enum.Enum) -> set[enum.Enum]:
        """States reachable in one transition from ``state`` (a function target: any state)."""
        out: set[enum.Enum] = set()
        for tool in (*self.tools[state], *self.global_tools):
            target = self.transitions.get(tool.name)
            if isinstance(target, enum.Enum):
                out.add(target)
            elif target is not None:
                out.update(self.states)
        return out

    def reachable_from(self, state: enum.Enum) -> set[enum.Enum]:
        """Every state reachable from ``state`` (including itself)."""
        seen = {state}
        stack = [state]
        while stack:
            for nxt in self.targets(stack.pop()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    def tools_for(self, state: enum.Enum) -> tuple[Tool, ...]:
        """The tools offered in ``state``: global tools first, then the state's own."""
        return (*self.global_tools, *self.tools[state])

    def states_of(self, tool_name: str) -> list[enum.Enum]:
        """The states in which ``tool_name`` is offered."""
        if any(t.name == tool_name for t in self.global_tools):
            return list(self.states)
        return [s for s, ts in self.tools.items() if any(t.name == tool_name for t in ts)]

    def current(self, state: Mapping[str, Any]) -> enum.Enum | None:
        """The current state recorded in a run's shared state (e.g. ``result.state``)."""
        value = state.get(self.state_key)
        return self._parse(value) if value is not None else None

    def _parse(self, value: Any, what: str = "") -> enum.Enum:
        if isinstance(value, self.states):
            return value
        for member in self.states:
            if value in (member.name, member.value):
                return member
        what = what or f"the run state value {self.state_key}={value!r}"
        raise UsageError(
            f"state machine {self._name}: {what} is not a state (got {value!r}); states: "
            f"{[s.name for s in self.states]}"
        )

    # -- the hooks ------------------------------------------------------------------------

    def before_turn(self, context: InjectionContext) -> ToolsetChange | None:
        own = context.state_for(self)
        if "current" in own:
            return None
        recorded = context.state.get(self.state_key)
        if recorded is not None:
            state, why = self._parse(recorded), "resumed from the run state"
        elif self.start is not None:
            state, why = self.start, "resumed run (start state)"
        else:
            assert self.initial is not None
            state, why = self.initial, "initial state"
        own["current"] = state
        context.state[self.state_key] = state
        event = StateTransition(
            iteration=context.iteration,
            machine=self._name,
            from_state=None,
            to_state=state.name,
        )
        return self._move(
            context, state, f"{self._name} starts in state {state.name} ({why})", event
        )

    def _move(
        self, context: InjectionContext, state: enum.Enum, reason: str, event: Event
    ) -> ToolsetChange:
        wanted = self.tools_for(state)
        wanted_names = {t.name for t in wanted}
        remove = tuple(n for n in context.offered if n in self._all_names and n not in wanted_names)
        add = tuple(self._bound[t.name] for t in wanted if t.name not in context.offered)
        change = ToolsetChange(add=add, remove=remove, reason=reason, events=(event,))
        return self.delivery.deliver(change, context)

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        call, result = context.call, context.result
        own = context.state_for(self)
        current: enum.Enum | None = own.get("current")
        if call is None or result is None or current is None or call.name not in self._all_names:
            return None
        offered_here = {t.name for t in self.tools_for(current)}
        if result.error_kind == "unknown_tool" and call.name not in offered_here:
            where = ", ".join(s.name for s in self.states_of(call.name))
            return ToolsetChange(
                result_note=(
                    f"{call.name!r} works only in state(s) {where}; the current state is "
                    f"{current.name}. Use the tools of state {current.name} first."
                )
            )
        if result.is_error or call.name not in self.transitions:
            return None
        if call.name not in offered_here:
            return ToolsetChange(
                events=(
                    StrategyWarning(
                        iteration=context.iteration,
                        strategy=self._name,
                        message=(
                            f"{call.name!r} succeeded but the state is already {current.name}, "
                            "where it is not offered; no transition"
                        ),
                    ),
                )
            )
        target = self.transitions[call.name]
        if not isinstance(target, enum.Enum):
            chosen = target(result.value)
            if chosen is None:
                return None
            target = self._parse(chosen, f"the transition function for {call.name!r} returned")
        if target is current:
            return None
        own["current"] = target
        context.state[self.state_key] = target
        event = StateTransition(
            iteration=context.iteration,
            machine=self._name,
            from_state=current.name,
            to_state=target.name,
            tool=call.name,
        )
        reason = f"{self._name}: {current.name} -> {target.name} after {call.name!r}"
        change = self._move(context, target, reason, event)
        if self.announce:
            change = dataclasses.replace(change, result_note=f"[state is now {target.name}]")
        return change
