"""``FakeMcpServer``: a scripted MCP server (real SDK server, canned results) for tests.

Tools have canned results (text, JSON, an error, raw MCP content blocks) or echo what
they received (arguments and ``_meta``: to check what crosses the boundary). List
changes happen at given steps: after the N-th call, or after the first call of a
named tool, the server adds and removes tools and sends
``notifications/tools/list_changed``. Every call is recorded in ``calls``.

It is served in-memory (``McpServer("name", fake)``), over streamable HTTP
(``harness serve --mcp``) or built from a scenario file's ``mcp_servers`` entry.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness._errors import UsageError

__all__ = ["CallSeen", "FakeListChange", "FakeMcpServer", "FakeMcpTool"]

_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
_RESERVED = "io.modelcontextprotocol/"

_CHANGE_HEAD_START = 0.05
"""Seconds a call that changed the tool list waits before answering (see ``_call``)."""
_STRICT = ConfigDict(extra="forbid", frozen=True)


class FakeMcpTool(BaseModel):
    """One scripted tool."""

    model_config = _STRICT

    name: str
    description: str = ""
    input_schema: Any = Field(default_factory=lambda: dict(_EMPTY_SCHEMA))
    """Given to clients as is (a malformed one is allowed: that is what tests need)."""
    result: Any = None
    """Text, or a JSON value returned as its JSON text (an object also as structured
    content)."""
    error: bool = False
    """Answer with ``isError: true`` and ``result`` as the message."""
    content: list[dict[str, Any]] | None = None
    """Raw MCP content blocks (images, resources...) instead of ``result``."""
    echo: bool = False
    """Answer with the arguments and ``_meta`` received (JSON), for boundary tests."""
    expect_meta: dict[str, Any] | None = None
    """When set, a call whose ``_meta`` differs gets an error result naming the keys
    received (so a scenario's ``errors: []`` proves what crossed the boundary)."""


class FakeListChange(BaseModel):
    """A change of the tool list at a given step."""

    model_config = _STRICT

    after_call: str | None = None
    """After the first call of this tool..."""
    after_calls: int | None = None
    """...or after this many calls in total."""
    add: list[FakeMcpTool] = Field(default_factory=list)
    remove: list[str] = Field(default_factory=list)


@dataclasses.dataclass(frozen=True, kw_only=True)
class CallSeen:
    """A call the fake received."""

    tool: str
    arguments: Mapping[str, Any]
    meta: Mapping[str, Any]
    """The request's ``_meta`` without the protocol's own ``io.modelcontextprotocol/`` keys."""


class FakeMcpServer:
    """A scripted MCP server built on the SDK's low-level ``Server``."""

    __test__ = False

    def __init__(
        self,
        name: str,
        tools: Sequence[FakeMcpTool | Mapping[str, Any]] = (),
        *,
        changes: Sequence[FakeListChange | Mapping[str, Any]] = (),
    ) -> None:
        try:
            self._initial = tuple(FakeMcpTool.model_validate(t) for t in tools)
            self.changes = tuple(FakeListChange.model_validate(c) for c in changes)
        except ValueError as exc:
            raise UsageError(f"FakeMcpServer {name!r}: invalid tools or changes: {exc}") from None
        for change in self.changes:
            if (change.after_call is None) == (change.after_calls is None):
                raise UsageError(
                    f"FakeMcpServer {name!r}: each change needs exactly one of after_call "
                    f"(a tool name) or after_calls (a count), got {change.model_dump()}"
                )
        self.name = name
        self.calls: list[CallSeen] = []
        """Every call received, in order."""
        self._lock = threading.Lock()
        self._tools: dict[str, FakeMcpTool] = {t.name: t for t in self._initial}
        self._done: set[int] = set()

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> FakeMcpServer:
        """From a scenario's ``mcp_servers`` entry: ``{name, tools, changes}``."""
        known = {"name", "tools", "changes"}
        unknown = sorted(set(data) - known)
        if unknown or "name" not in data:
            raise UsageError(
                f"a fake MCP server needs 'name' and takes {sorted(known)}; got {sorted(data)}"
            )
        return cls(str(data["name"]), data.get("tools", ()), changes=data.get("changes", ()))

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The tools listed now."""
        with self._lock:
            return tuple(self._tools)

    @property
    def last_call(self) -> CallSeen | None:
        """The most recent call, if any."""
        return self.calls[-1] if self.calls else None

    def reset(self) -> None:
        """Back to the initial tools, with no calls recorded."""
        with self._lock:
            self._tools = {t.name: t for t in self._initial}
            self._done.clear()
            self.calls.clear()

    # -- the SDK server -----------------------------------------------------------------

    def mcp_target(self) -> Any:
        """An SDK low-level ``Server`` serving this script (what ``McpServer`` connects to)."""
        from mcp.server import Server
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

        bus = InMemorySubscriptionBus()
        fake = self

        async def list_tools(ctx: Any, params: Any) -> Any:
            import mcp_types as types

            with fake._lock:
                listed = list(fake._tools.values())
            return types.ListToolsResult(
                tools=[
                    types.Tool.model_construct(
                        name=t.name, description=t.description, input_schema=t.input_schema
                    )
                    for t in listed
                ]
            )

        async def call_tool(ctx: Any, params: Any) -> Any:
            return await fake._call(ctx, params, bus)

        def input_schema(name: str) -> Any:
            with fake._lock:
                tool = fake._tools.get(name)
            return None if tool is None else tool.input_schema

        return Server(
            self.name,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_subscriptions_listen=ListenHandler(bus),
            # over HTTP the SDK checks each call's Mcp-Param headers against the tool's
            # schema: without this lookup it runs the whole tools/list handler per call
            get_tool_input_schema=input_schema,
        )

    async def _call(self, ctx: Any, params: Any, bus: Any) -> Any:
        import anyio
        import mcp_types as types
        from mcp.server.subscriptions import ToolsListChanged

        name = str(params.name)
        arguments = dict(params.arguments or {})
        raw_meta = ctx.meta or {}
        meta = {k: v for k, v in dict(raw_meta).items() if not str(k).startswith(_RESERVED)}
        with self._lock:
            tool = self._tools.get(name)
            self.calls.append(CallSeen(tool=name, arguments=arguments, meta=meta))
            changed = self._due(name)
        if changed:
            await bus.publish(ToolsListChanged())
            with contextlib.suppress(Exception):  # older eras: the session's own channel
                await ctx.session.send_tool_list_changed()
            # over HTTP the change goes out on the client's listen stream, apart from this
            # answer: a head start lets the client see it before the result that caused it
            await anyio.sleep(_CHANGE_HEAD_START)
        if tool is None:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"Unknown tool: {name}")],
                is_error=True,
            )
        if tool.expect_meta is not None and meta != tool.expect_meta:
            return types.CallToolResult(
                content=[
                    types.TextContent(
                        type="text",
                        text=f"unexpected _meta: expected keys {sorted(tool.expect_meta)}, "
                        f"got keys {sorted(meta)}",
                    )
                ],
                is_error=True,
            )
        if tool.echo:
            text = json.dumps({"arguments": arguments, "meta": meta}, sort_keys=True)
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
        if tool.content is not None:
            return types.CallToolResult.model_validate({"content": tool.content})
        if isinstance(tool.result, str) or tool.result is None:
            text = "" if tool.result is None else tool.result
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)], is_error=tool.error
            )
        return types.CallToolResult(  # structured content is an object in every era
            content=[types.TextContent(type="text", text=json.dumps(tool.result))],
            structured_content=tool.result if isinstance(tool.result, dict) else None,
            is_error=tool.error,
        )

    def _due(self, name: str) -> bool:
        """Apply the changes this call triggers (lock held); True if the list changed."""
        count = len(self.calls)
        changed = False
        for index, change in enumerate(self.changes):
            if index in self._done:
                continue
            hit = change.after_call == name or (
                change.after_calls is not None and count >= change.after_calls
            )
            if not hit:
                continue
            self._done.add(index)
            for removed in change.remove:
                self._tools.pop(removed, None)
            for added in change.add:
                self._tools[added.name] = added
            changed = True
        return changed
