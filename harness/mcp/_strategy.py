"""``McpTools``: offer MCP servers' tools and follow their runtime changes.

Before the first turn the strategy connects each server (the lazy handshake happens
here, on first use) and offers its tools. When a server later sends
``notifications/tools/list_changed``, the strategy lists the tools again before the
next model request and turns the difference into a toolset change: added tools are
injections, vanished tools removals, changed definitions replacements, all recorded
with strategy ``mcp:<server>`` as the cause.

With ``offer=False`` the strategy only *follows* a server whose tools reach the
toolset some other way (an MCP facade, an MCP tool group): it removes and replaces
the server's offered tools as the server changes them, and adds new ones once any of
the server's tools is on offer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from harness._errors import UsageError
from harness.loop import Event, InjectionContext, InjectionStrategy, StrategyWarning, ToolsetChange
from harness.mcp._errors import McpToolError
from harness.mcp._server import Connected, McpServer
from harness.tools import Tool

__all__ = ["McpConnected", "McpTools", "connected_events"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class McpConnected(Event):
    """An MCP server was connected (its lazy handshake happened)."""

    server: str
    protocol_version: str
    tools: tuple[str, ...]
    """Model-visible names of the tools it listed."""
    seconds: float
    """How long the handshake and first listing took."""


def connected_events(servers: Iterable[McpServer], iteration: int) -> list[Event]:
    """Events for the connections of ``servers`` not reported yet."""
    return [_event(info, iteration) for s in servers for info in s.take_connections()]


def _event(info: Connected, iteration: int) -> McpConnected:
    return McpConnected(
        iteration=iteration,
        server=info.server,
        protocol_version=info.protocol_version,
        tools=info.tools,
        seconds=info.seconds,
    )


def _warnings(server: McpServer, iteration: int, strategy: str) -> list[Event]:
    events: list[Event] = [
        StrategyWarning(
            iteration=iteration,
            strategy=strategy,
            message=f"MCP server {server.name!r}, tool {s.tool!r}: {s.problem}",
        )
        for s in server.skipped
    ]
    if server.incomplete is not None:
        events.append(
            StrategyWarning(
                iteration=iteration,
                strategy=strategy,
                message=f"MCP server {server.name!r}: {server.incomplete}",
            )
        )
    return events


def _same(a: Tool, b: Tool) -> bool:
    return a.description == b.description and dict(a.parameters) == dict(b.parameters)


class McpTools(InjectionStrategy):
    """Offer (``offer=True``) or follow (``offer=False``) the tools of MCP servers."""

    def __init__(
        self, *servers: McpServer, offer: bool = True, defer_loading: bool = False
    ) -> None:
        names = [getattr(s, "name", None) for s in servers]
        problems = [f"{s!r} is not an McpServer" for s in servers if not isinstance(s, McpServer)]
        if not servers:
            problems.append("give at least one McpServer")
        duplicates = sorted({n for n in names if names.count(n) > 1 and n is not None})
        if duplicates:
            problems.append(f"server names must be unique, got {duplicates} more than once")
        if problems:
            raise UsageError("McpTools: " + "; ".join(problems))
        self.servers = tuple(servers)
        self.offer = offer
        self.defer_loading = defer_loading
        """Offer the servers' tools deferred: declared, found through a tool search
        (``harness.injection.ToolSearch``, the provider's or a local one over them)."""

    @property
    def name(self) -> str:
        return "mcp"

    def before_turn(self, context: InjectionContext) -> list[ToolsetChange]:
        own = context.state_for(self)
        changes: list[ToolsetChange] = []
        offered: dict[str, Tool] = dict(context.tools)
        for server in self.servers:
            applied = own.get(server.name)
            change = None
            if applied is None:
                if self.offer:
                    change = self._first(server, context, offered)
                elif server.connections:  # connected by a facade or a group: follow it
                    own[server.name] = server.listed_generation
            elif applied != server.generation:
                change = self._changed(server, context, offered)
            if change is not None:
                changes.append(change)
                _apply(offered, change)
        events = connected_events(self.servers, context.iteration)
        if events:
            changes.append(ToolsetChange(events=tuple(events), reason="MCP servers connected"))
        return changes

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        events = connected_events(self.servers, context.iteration)
        if not events:
            return None
        return ToolsetChange(events=tuple(events), reason="MCP servers connected")

    def _deferred(self, tools: Iterable[Tool]) -> list[Tool]:
        return [t.deferred() for t in tools] if self.defer_loading else list(tools)

    def _first(
        self, server: McpServer, context: InjectionContext, offered: Mapping[str, Tool]
    ) -> ToolsetChange:
        generation = server.generation
        tools = self._deferred(server.tools())  # the lazy handshake happens here, on first use
        own = context.state_for(self)
        own[server.name] = generation
        add = []
        for tool in tools:
            existing = offered.get(tool.name)
            if existing is tool:
                continue
            if existing is not None:
                other = existing.metadata.get("mcp_server")
                where = f"MCP server {other!r}" if other else "another tool"
                raise McpToolError(
                    server.name,
                    f"the tool name {tool.name!r} is already offered by {where}; "
                    "use McpServer(..., names='prefix') to prefix tool names with the server "
                    "name, or filter= to leave one out",
                    tool=tool.name,
                )
            add.append(tool)
        events = [
            *connected_events([server], context.iteration),
            *_warnings(server, context.iteration, f"mcp:{server.name}"),
        ]
        return ToolsetChange(
            add=tuple(add),
            reason=f"MCP server {server.name!r}: offered its {len(add)} tool(s)",
            strategy=f"mcp:{server.name}",
            events=tuple(events),
        )

    def _changed(
        self, server: McpServer, context: InjectionContext, offered: Mapping[str, Tool]
    ) -> ToolsetChange | None:
        generation = server.generation
        listed = {t.name: t for t in self._deferred(server.tools())}
        context.state_for(self)[server.name] = generation
        mine = {n: t for n, t in offered.items() if t.metadata.get("mcp_server") == server.name}
        remove = tuple(n for n in mine if n not in listed)
        replace = tuple(
            _scoped(t, mine[n].metadata.get(SCOPE))
            for n, t in listed.items()
            if n in mine and not _same(mine[n], t)
        )
        scopes = [t.metadata.get(SCOPE) for t in mine.values()]
        if self.offer:
            scopes.append(None)
        add: list[Tool] = []
        events: list[Event] = _warnings(server, context.iteration, f"mcp:{server.name}")
        for name, tool in listed.items():
            scope = _accepting(scopes, tool)
            if name in mine or scope is False:
                continue
            if name in offered:
                events.append(
                    StrategyWarning(
                        iteration=context.iteration,
                        strategy=f"mcp:{server.name}",
                        message=(
                            f"MCP server {server.name!r}, tool {name!r}: not added, another "
                            "tool with this name is offered"
                        ),
                    )
                )
                continue
            add.append(_scoped(tool, scope))
        if not (add or remove or replace or events):
            return None
        words = [f"+{t.name}" for t in add] + [f"-{n}" for n in remove]
        words += [f"~{t.name}" for t in replace]
        return ToolsetChange(
            add=tuple(add),
            remove=remove,
            replace=replace,
            reason=(
                f"MCP server {server.name!r} sent notifications/tools/list_changed: "
                + (" ".join(words) or "no change to the offered tools")
            ),
            strategy=f"mcp:{server.name}",
            events=tuple(events),
        )


SCOPE = "mcp_scope"
"""Tool metadata: a predicate saying which *new* tools of the server belong with this one
(set by MCP facades and groups; absent means every new tool)."""


def _accepting(scopes: list[Any], tool: Tool) -> Any:
    """The first scope accepting ``tool`` (``None``: unscoped), or ``False`` when none does."""
    for scope in scopes:
        if scope is None or scope(tool):
            return scope
    return False


def _scoped(tool: Tool, scope: Any) -> Tool:
    return tool if scope is None else tool.with_metadata(**{SCOPE: scope})


def _apply(offered: dict[str, Tool], change: ToolsetChange) -> None:
    for name in change.remove:
        offered.pop(name, None)
    for tool in (*change.replace, *change.add):
        offered[tool.name] = tool
