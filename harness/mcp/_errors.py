"""Errors raised at the MCP boundary; each names the server and, when there is one, the tool.

```
HarnessError
└── McpError                  something went wrong talking to an MCP server
    ├── McpConnectError       the server is down or refused the handshake
    ├── McpTimeout            the server did not finish the handshake in time
    ├── McpToolError          a tool is unusable: invalid name, malformed schema, collision,
    │                         or not on the server (``required_tool_by_name``)
    └── McpCallError          a call failed at the protocol level (crash mid-call, MCP error)

HarnessWarning
└── McpServerKilled           a stdio server had to be killed when its McpServer closed
```

A tool call that fails this way becomes an error tool result the model reads (the loop
catches the exception); the exception is kept on ``ToolResult.exception``.
"""

from __future__ import annotations

from harness._errors import HarnessError, HarnessWarning

__all__ = [
    "McpCallError",
    "McpConnectError",
    "McpError",
    "McpServerKilled",
    "McpTimeout",
    "McpToolError",
]


class McpError(HarnessError):
    """Base of the MCP errors: ``server`` (and ``tool``, when known) say where it happened."""

    def __init__(self, server: str, problem: str, *, tool: str | None = None) -> None:
        self.server = server
        """The harness name of the MCP server."""
        self.tool = tool
        """The MCP tool name, when the error concerns one tool."""
        self.problem = problem
        where = f"MCP server {server!r}" + (f", tool {tool!r}" if tool is not None else "")
        super().__init__(f"{where}: {problem}")


class McpConnectError(McpError):
    """The server could not be reached or refused the handshake (it is down, the command
    does not exist, the URL does not answer)."""


class McpTimeout(McpError):
    """The server did not answer the handshake within ``init_timeout`` seconds, or a call
    within ``call_timeout`` seconds."""


class McpToolError(McpError):
    """A tool the server lists cannot be offered (invalid name, malformed input schema, a
    name collision) or a required tool is not on the server."""


class McpCallError(McpError):
    """A call failed at the protocol level: the server crashed or closed the connection
    mid-call, or answered with an MCP error instead of a result."""


class McpServerKilled(HarnessWarning):
    """A stdio server did not exit within ``shutdown_grace`` seconds of its stdin closing
    and SIGTERM, and was killed (SIGKILL, with its process group) when its ``McpServer``
    closed. ``server`` is its harness name, ``pid`` its process id."""

    def __init__(self, server: str, pid: int, grace: float) -> None:
        self.server = server
        self.pid = pid
        super().__init__(
            f"MCP server {server!r} (pid {pid}) did not exit within {grace:g}s of its stdin "
            "closing and SIGTERM (shutdown_grace); it was killed with its process group "
            "(SIGKILL). Does it ignore end-of-file on stdin and SIGTERM, or hang in a call?"
        )


for _cls in (McpError, McpConnectError, McpTimeout, McpToolError, McpCallError, McpServerKilled):
    _cls.__module__ = "harness.mcp"  # the public package, in tracebacks and reprs
del _cls
