"""Named tool groups switched on and off during a run.

A group is activated or deactivated by a tool (any tool returning a
``GroupRequest``; ``activate_group``/``deactivate_group`` are offered), by a rule
(a function of the loop context, asked before each turn), or by the caller between
turns (``groups.activate("web")``). A run may ask for a *role* ("web") that the
environment maps to a concrete group ("web_duckduckgo"). Groups carry a
description and the permissions they need; a group needing a permission the run
was not granted is refused.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal, cast

from harness._errors import UsageError
from harness.loop import Event, InjectionContext, InjectionStrategy, StrategyWarning, ToolsetChange
from harness.tools import Tool, ToolResult, as_tool

__all__ = ["GroupRequest", "GroupsChanged", "ToolGroup", "ToolGroups"]

Source = Literal["initial", "tool", "rule", "caller"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ToolGroup:
    """A named set of tools with a description and the permissions it needs.

    The tools are given up front (``tools``) or come from ``source``, a function asked
    when the group is activated (e.g. an MCP server, connected on first activation).
    """

    name: str
    tools: Sequence[Tool | Callable[..., Any]] = ()
    """``Tool``s or ``@llm_tool`` functions (stored as ``Tool``s, see ``tool_objects``)."""
    description: str = ""
    permissions: frozenset[str] = frozenset()
    """Permissions the run must grant before the group can be activated."""
    provider: str = ""
    """Where the tools come from (e.g. ``mcp:github``), shown in the group catalog."""
    source: Callable[[], Sequence[Tool]] | None = dataclasses.field(default=None, compare=False)
    """Lazy tools: called on activation (and again later: it may give a changed list)."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise UsageError(f"a tool group needs a non-empty name, got {self.name!r}")
        if self.source is not None and (self.tools or not callable(self.source)):
            raise UsageError(
                f"tool group {self.name!r}: give either tools or a source function, "
                f"got tools={self.tools!r} and source={self.source!r}"
            )
        object.__setattr__(self, "tools", tuple(as_tool(t) for t in self.tools))
        object.__setattr__(self, "permissions", frozenset(self.permissions))

    @property
    def tool_objects(self) -> tuple[Tool, ...]:
        """The group's tools as ``Tool`` objects (a ``source`` is asked now)."""
        if self.source is not None:
            return tuple(as_tool(t) for t in self.source())
        return cast("tuple[Tool, ...]", self.tools)


@dataclasses.dataclass(frozen=True, kw_only=True)
class GroupRequest:
    """Return this from a tool (or a rule) to switch groups; names may be roles."""

    activate: tuple[str, ...] = ()
    deactivate: tuple[str, ...] = ()
    reason: str = ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GroupsChanged(Event):
    """The set of active groups changed."""

    activated: tuple[str, ...]
    deactivated: tuple[str, ...]
    active: tuple[str, ...]
    """The groups active afterwards."""
    source: str
    """Who asked: ``initial``, ``tool``, ``rule`` or ``caller``."""


class ToolGroups(InjectionStrategy):
    """Offer the tools of the active groups; switch groups on request.

    ``roles`` maps role names to group names (the environment's choice);
    ``permissions`` is what the run may use (``None``: everything); ``rule`` is asked
    before each turn and may return a ``GroupRequest``. ``manage=False`` leaves out
    the ``activate_group``/``deactivate_group`` tools.
    """

    @property
    def name(self) -> str:
        """``groups`` in the trace (docs/pytest-plugin.md#strategy-names)."""
        return "groups"

    def __init__(
        self,
        groups: Iterable[ToolGroup],
        *,
        active: Iterable[str] = (),
        roles: Mapping[str, str] | None = None,
        permissions: Iterable[str] | None = None,
        rule: Callable[[InjectionContext], GroupRequest | None] | None = None,
        manage: bool = True,
    ) -> None:
        self.groups = {g.name: g for g in groups}
        self.roles = dict(roles or {})
        self.permissions = None if permissions is None else frozenset(permissions)
        self.rule = rule
        problems = [
            f"role {role!r} maps to unknown group {group!r}"
            for role, group in self.roles.items()
            if group not in self.groups
        ]
        problems += [
            f"role {role!r} has the name of a group; give roles their own names"
            for role in self.roles
            if role in self.groups
        ]
        if problems:
            raise UsageError("invalid tool groups: " + "; ".join(problems) + f"; {self._known()}")
        self.initial = tuple(self._check(name, "active") for name in active)
        self._static_owned = frozenset(
            t.name for g in self.groups.values() if g.source is None for t in g.tool_objects
        )
        self._queue: list[GroupRequest] = []
        self._lock = threading.Lock()
        self.tools: tuple[Tool, ...] = self._management_tools() if manage else ()

    def _known(self) -> str:
        return f"groups: {sorted(self.groups)}, roles: {sorted(self.roles)}"

    def resolve(self, name: str) -> str | None:
        """The group a group name or role stands for (``None`` when unknown)."""
        name = self.roles.get(name, name)
        return name if name in self.groups else None

    def refusal(self, name: str) -> str | None:
        """Why ``name`` (a group or role) cannot be activated, or ``None`` when it can."""
        group = self.resolve(name)
        if group is None:
            return f"unknown group or role {name!r}; {self._known()}"
        missing = sorted(self.groups[group].permissions - (self.permissions or frozenset()))
        if self.permissions is not None and missing:
            return f"group {group!r} needs permission(s) {missing}, which this run does not grant"
        return None

    def _check(self, name: str, what: str) -> str:
        problem = self.refusal(name)
        if problem is not None:
            raise UsageError(f"cannot use {name!r} in {what}: {problem}")
        group = self.resolve(name)
        assert group is not None
        return group

    # -- the caller's handle ---------------------------------------------------------------

    def activate(self, *names: str, reason: str = "activated by the caller") -> None:
        """Activate groups (or roles) from the next turn on (call between turns)."""
        for name in names:
            self._check(name, "activate()")
        with self._lock:
            self._queue.append(GroupRequest(activate=names, reason=reason))

    def deactivate(self, *names: str, reason: str = "deactivated by the caller") -> None:
        """Deactivate groups (or roles) from the next turn on (call between turns)."""
        for name in names:
            if self.resolve(name) is None:
                raise UsageError(
                    f"cannot deactivate unknown group or role {name!r}; {self._known()}"
                )
        with self._lock:
            self._queue.append(GroupRequest(deactivate=names, reason=reason))

    @staticmethod
    def active(state: Mapping[str, Any]) -> tuple[str, ...]:
        """The active groups recorded in a run's shared state (e.g. ``result.state``)."""
        return tuple(state.get("active_groups", ()))

    # -- tools -----------------------------------------------------------------------------

    def _catalog(self) -> str:
        lines = []
        for group in self.groups.values():
            needs = f" (needs {', '.join(sorted(group.permissions))})" if group.permissions else ""
            source = f" [{group.provider}]" if group.provider else ""
            lines.append(f"- {group.name}{source}: {group.description or 'no description'}{needs}")
        lines += [f"- {role}: role, currently {group}" for role, group in self.roles.items()]
        return "\n".join(lines)

    def _management_tools(self) -> tuple[Tool, ...]:
        def activate_group(name: Annotated[str, "Group or role name"]) -> ToolResult:
            problem = self.refusal(name)
            if problem is not None:
                return ToolResult.error(f"Cannot activate {name!r}: {problem}.", kind="refused")
            request = GroupRequest(activate=(name,), reason=f"activate_group({name!r})")
            return ToolResult(content=f"group {self.resolve(name)!r} is active", value=request)

        def deactivate_group(name: Annotated[str, "Group or role name"]) -> ToolResult:
            if self.resolve(name) is None:
                return ToolResult.error(
                    f"Cannot deactivate {name!r}: unknown group or role; {self._known()}.",
                    kind="refused",
                )
            request = GroupRequest(deactivate=(name,), reason=f"deactivate_group({name!r})")
            return ToolResult(content=f"group {self.resolve(name)!r} is inactive", value=request)

        catalog = self._catalog()
        return (
            Tool.from_function(
                activate_group, description=f"Activate a tool group. Groups:\n{catalog}"
            ),
            Tool.from_function(
                deactivate_group, description=f"Deactivate a tool group. Groups:\n{catalog}"
            ),
        )

    # -- hooks -----------------------------------------------------------------------------

    def before_turn(self, context: InjectionContext) -> list[ToolsetChange]:
        changes = []
        own = context.state_for(self)
        if "active" not in own:
            own["active"] = []
            add = tuple(t for t in self.tools if t.name not in context.offered)
            if add:
                changes.append(ToolsetChange(add=add, reason="tool group management tools"))
            initial = GroupRequest(activate=self.initial, reason="initially active")
            changes.append(self._apply(context, initial, "initial", changes))
        with self._lock:
            queued, self._queue = self._queue, []
        for request in queued:
            changes.append(self._apply(context, request, "caller", changes))
        if self.rule is not None:
            wanted = self.rule(context)
            if wanted is not None:
                changes.append(self._apply(context, wanted, "rule", changes))
        return changes

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        result = context.result
        if result is None or result.is_error or not isinstance(result.value, GroupRequest):
            return None
        return self._apply(context, result.value, "tool", [])

    def _apply(
        self,
        context: InjectionContext,
        request: GroupRequest,
        source: Source,
        earlier: list[ToolsetChange],
    ) -> ToolsetChange:
        own = context.state_for(self)
        active: list[str] = own["active"]
        before = list(active)
        warnings = []
        for name in request.deactivate:
            group = self.resolve(name)
            if group is None:
                warnings.append(f"ignored deactivating unknown group or role {name!r}")
            elif group in active:
                active.remove(group)
        for name in request.activate:
            problem = self.refusal(name)
            group = self.resolve(name)
            if problem is not None or group is None:
                warnings.append(f"ignored activating {name!r}: {problem}")
            elif group not in active:
                active.append(group)
        context.state["active_groups"] = tuple(active)
        offered = _offered_after(context.offered, earlier)
        wanted = {t.name: t for g in active for t in self.groups[g].tool_objects}
        sourced: set[str] = own.setdefault("sourced", set())  # sources asked in this run
        sourced.update(g for g in active if self.groups[g].source is not None)
        owned = self._static_owned.union(
            t.name for g in sorted(sourced) for t in self.groups[g].tool_objects
        )
        remove = tuple(n for n in offered if n in owned and n not in wanted)
        add = tuple(t for n, t in wanted.items() if n not in offered)
        activated = tuple(g for g in active if g not in before)
        deactivated = tuple(g for g in before if g not in active)
        events: list[Event] = [
            StrategyWarning(iteration=context.iteration, strategy=self.name, message=text)
            for text in warnings
        ]
        if activated or deactivated:
            events.append(
                GroupsChanged(
                    iteration=context.iteration,
                    activated=activated,
                    deactivated=deactivated,
                    active=tuple(active),
                    source=source,
                )
            )
        words = [f"+{g}" for g in activated] + [f"-{g}" for g in deactivated]
        reason = (
            f"groups {' '.join(words) or 'unchanged'} ({source}: {request.reason or 'no reason'})"
        )
        return ToolsetChange(add=add, remove=remove, reason=reason, events=tuple(events))


def _offered_after(offered: tuple[str, ...], changes: list[ToolsetChange]) -> list[str]:
    """The offered names once ``changes`` (not applied yet) are applied."""
    names = list(offered)
    for change in changes:
        names = [n for n in names if n not in change.remove]
        names += [t.name for t in change.add if t.name not in names]
    return names
