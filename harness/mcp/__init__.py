"""MCP servers as tool sources: their tools offered, unfolded and grouped like any other.

Needs the optional extra: ``pip install 'tool-loop-harness[mcp]'`` (the official ``mcp``
SDK). Importing this package is cheap; the SDK is imported on first connection.
"""

from __future__ import annotations

import typing

from harness._lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:  # the public API: each name once (harness._lazy reads this)
    from harness.mcp._convert import (
        Listed as Listed,
        NamePolicy as NamePolicy,
        Skipped as Skipped,
    )
    from harness.mcp._errors import (
        McpCallError as McpCallError,
        McpConnectError as McpConnectError,
        McpError as McpError,
        McpServerKilled as McpServerKilled,
        McpTimeout as McpTimeout,
        McpToolError as McpToolError,
    )
    from harness.mcp._facade import (
        mcp_facade as mcp_facade,
        mcp_group as mcp_group,
        select_tools as select_tools,
    )
    from harness.mcp._fake import (
        CallSeen as CallSeen,
        FakeListChange as FakeListChange,
        FakeMcpServer as FakeMcpServer,
        FakeMcpTool as FakeMcpTool,
    )
    from harness.mcp._http import (
        McpHttpServer as McpHttpServer,
        ToolsAsMcp as ToolsAsMcp,
    )
    from harness.mcp._meta import (
        MetaConverter as MetaConverter,
        allow_keys as allow_keys,
        deny_keys as deny_keys,
        no_meta as no_meta,
        pass_through as pass_through,
    )
    from harness.mcp._server import (
        Connected as Connected,
        McpServer as McpServer,
        ToolFilter as ToolFilter,
    )
    from harness.mcp._strategy import (
        McpConnected as McpConnected,
        McpTools as McpTools,
    )


__getattr__, __dir__, __all__ = _lazy_exports(__name__, __file__, globals())
"""Lazy re-exports (PEP 562): ``__all__`` is the names imported above for type checkers."""
