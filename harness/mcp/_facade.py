"""MCP tools behind unfolding facades and in tool groups.

``mcp_facade`` makes a server with 40 tools appear to the model as a few category
tools that unfold into the MCP tools they stand for (chosen by names, by regex
patterns, or by a predicate). ``mcp_group`` makes a ``ToolGroup`` of a server's
tools, activated like any other group. Both connect the server on first use (the
unfolding, the activation), not at construction.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from typing import Any

from harness._errors import UsageError
from harness.injection import Facade, InjectionContext, ToolGroup, ToolsetChange
from harness.mcp._errors import McpToolError
from harness.mcp._server import McpServer, ToolFilter
from harness.mcp._strategy import connected_events
from harness.tools import Tool, ToolResult

__all__ = ["mcp_facade", "mcp_group", "select_tools"]


def select_tools(
    server: McpServer,
    *,
    names: Sequence[str] | None = None,
    patterns: Sequence[str] | None = None,
    predicate: ToolFilter | None = None,
) -> list[Tool]:
    """The server's tools chosen by exact ``names`` (all must exist), regex ``patterns``
    (``re.fullmatch`` on the model-visible name), or a ``predicate``; all tools if none."""
    if names is not None:
        return [server.required_tool_by_name(n) for n in names]
    return select_tools_from(server.tools(), patterns=patterns, predicate=predicate)


def select_tools_from(
    tools: Sequence[Tool],
    *,
    patterns: Sequence[str] | None = None,
    predicate: ToolFilter | None = None,
) -> list[Tool]:
    """``tools`` matching regex ``patterns`` or ``predicate`` (all of them if neither)."""
    if patterns is not None:
        compiled = [re.compile(p) for p in patterns]
        return [t for t in tools if any(c.fullmatch(t.name) for c in compiled)]
    if predicate is not None:
        return [t for t in tools if predicate(t)]
    return list(tools)


def _check_selection(
    where: str,
    names: Sequence[str] | None,
    patterns: Sequence[str] | None,
    predicate: ToolFilter | None,
) -> None:
    given = [
        k for k, v in (("names", names), ("patterns", patterns), ("predicate", predicate)) if v
    ]
    problems = []
    if len(given) > 1:
        problems.append(f"choose tools by one of names, patterns or predicate, got {given}")
    for label, value in (("names", names), ("patterns", patterns)):
        if isinstance(value, str):
            problems.append(f"{label} must be a list of texts, got the text {value!r}")
    for pattern in patterns or ():
        try:
            re.compile(pattern)
        except re.error as exc:
            problems.append(f"pattern {pattern!r} is not a valid regex: {exc}")
    if predicate is not None and not callable(predicate):
        problems.append(f"predicate must be a function (Tool) -> bool, got {predicate!r}")
    if problems:
        raise UsageError(f"{where}: " + "; ".join(problems))


def mcp_facade(
    server: McpServer,
    name: str,
    description: str,
    *,
    names: Sequence[str] | None = None,
    patterns: Sequence[str] | None = None,
    predicate: ToolFilter | None = None,
    notes: Sequence[str] = (),
    remove_on_invoke: bool = False,
    exclusive: bool = False,
) -> Tool:
    """A facade tool that unfolds into the chosen MCP tools of ``server``.

    ``remove_on_invoke=True`` takes the facade off the toolset once unfolded (by default
    it stays as a guide listing what it made available). The server is connected when
    the facade is first called.
    """
    where = f"mcp_facade {name!r}"
    _check_selection(where, names, patterns, predicate)

    def scope(tool: Tool) -> bool:
        """Whether a tool the server adds later belongs behind this facade."""
        if names is not None:
            return tool.name in names or tool.metadata.get("mcp_tool") in names
        return bool(select_tools_from([tool], patterns=patterns, predicate=predicate))

    def choose() -> list[Tool]:
        chosen = [
            t.with_metadata(mcp_scope=scope)
            for t in select_tools(server, names=names, patterns=patterns, predicate=predicate)
        ]
        if not chosen:
            available = ", ".join(t.name for t in server.tools()) or "(none)"
            raise McpToolError(
                server.name, f"facade {name!r} matches no tool; available: {available}"
            )
        return chosen

    tool = Facade(name, description, selector=choose, notes=notes, exclusive=exclusive).tool()
    unfold = tool.handler

    def handler(**kwargs: Any) -> Any:
        result = unfold(**kwargs)
        if not isinstance(result, ToolResult) or not callable(result.change):
            return result  # pragma: no cover - the facade always declares its change
        declared = result.change

        def change(context: InjectionContext) -> ToolsetChange | None:
            made: ToolsetChange | None = declared(context)
            if made is None:  # pragma: no cover - facades always change something
                return None
            events = (*made.events, *connected_events([server], context.iteration))
            if remove_on_invoke:
                return dataclasses.replace(
                    made,
                    replace=(),
                    remove=(*made.remove, name),
                    events=events,
                    reason=made.reason + f"; removed {name!r} (remove_on_invoke)",
                )
            return dataclasses.replace(made, events=events)

        return dataclasses.replace(result, change=change)

    metadata = {**tool.metadata, "mcp_facade": server.name}
    return dataclasses.replace(tool, handler=handler, metadata=metadata)


def mcp_group(
    server: McpServer,
    name: str | None = None,
    *,
    description: str = "",
    permissions: Iterable[str] = (),
    filter: ToolFilter | None = None,
) -> ToolGroup:
    """A tool group of ``server``'s tools (those ``filter`` keeps), provider ``mcp:<server>``;
    the server is connected when the group is first activated."""
    if filter is not None and not callable(filter):
        raise UsageError(f"mcp_group: filter must be a function (Tool) -> bool, got {filter!r}")

    def scope(tool: Tool) -> bool:
        return filter is None or bool(filter(tool))

    def source() -> list[Tool]:
        return [t.with_metadata(mcp_scope=scope) for t in server.tools() if scope(t)]

    return ToolGroup(
        name=name or server.name,
        description=description or f"the tools of MCP server {server.name!r}",
        permissions=frozenset(permissions),
        provider=f"mcp:{server.name}",
        source=source,
    )
