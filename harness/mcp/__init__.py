"""MCP servers as tool sources: their tools offered, unfolded and grouped like any other.

Needs the optional extra: ``pip install 'tool-loop-harness[mcp]'`` (the official ``mcp``
SDK). Importing this package is cheap; the SDK is imported on first connection.
"""

from __future__ import annotations

import typing

from harness._lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from harness.mcp._convert import Listed, NamePolicy, Skipped
    from harness.mcp._errors import (
        McpCallError,
        McpConnectError,
        McpError,
        McpTimeout,
        McpToolError,
    )
    from harness.mcp._facade import mcp_facade, mcp_group, select_tools
    from harness.mcp._fake import CallSeen, FakeListChange, FakeMcpServer, FakeMcpTool
    from harness.mcp._http import McpHttpServer, ToolsAsMcp
    from harness.mcp._meta import MetaConverter, allow_keys, deny_keys, no_meta, pass_through
    from harness.mcp._server import Connected, McpServer, ToolFilter
    from harness.mcp._strategy import McpConnected, McpTools

_LAZY: dict[str, str] = {
    "Listed": "harness.mcp._convert",
    "NamePolicy": "harness.mcp._convert",
    "Skipped": "harness.mcp._convert",
    "McpCallError": "harness.mcp._errors",
    "McpConnectError": "harness.mcp._errors",
    "McpError": "harness.mcp._errors",
    "McpTimeout": "harness.mcp._errors",
    "McpToolError": "harness.mcp._errors",
    "mcp_facade": "harness.mcp._facade",
    "mcp_group": "harness.mcp._facade",
    "select_tools": "harness.mcp._facade",
    "CallSeen": "harness.mcp._fake",
    "FakeListChange": "harness.mcp._fake",
    "FakeMcpServer": "harness.mcp._fake",
    "FakeMcpTool": "harness.mcp._fake",
    "McpHttpServer": "harness.mcp._http",
    "ToolsAsMcp": "harness.mcp._http",
    "MetaConverter": "harness.mcp._meta",
    "allow_keys": "harness.mcp._meta",
    "deny_keys": "harness.mcp._meta",
    "no_meta": "harness.mcp._meta",
    "pass_through": "harness.mcp._meta",
    "Connected": "harness.mcp._server",
    "McpServer": "harness.mcp._server",
    "ToolFilter": "harness.mcp._server",
    "McpConnected": "harness.mcp._strategy",
    "McpTools": "harness.mcp._strategy",
}

__all__ = [
    "CallSeen",
    "Connected",
    "FakeListChange",
    "FakeMcpServer",
    "FakeMcpTool",
    "Listed",
    "McpCallError",
    "McpConnectError",
    "McpConnected",
    "McpError",
    "McpHttpServer",
    "McpServer",
    "McpTimeout",
    "McpToolError",
    "McpTools",
    "MetaConverter",
    "NamePolicy",
    "Skipped",
    "ToolFilter",
    "ToolsAsMcp",
    "allow_keys",
    "deny_keys",
    "mcp_facade",
    "mcp_group",
    "no_meta",
    "pass_through",
    "select_tools",
]

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, globals())
