"""A small real MCP server over stdio for the tests (the official SDK's ``MCPServer``).

``python stdio_server.py``        serves the tools below;
``python stdio_server.py hang``   reads nothing and never answers (a hung handshake).
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("stdio-demo")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo_meta(ctx: Context) -> str:
    """The _meta keys this call carried (protocol keys left out), comma-separated."""
    meta = dict(ctx.request_context.meta or {})
    return ",".join(sorted(k for k in meta if not k.startswith("io.modelcontextprotocol/")))


@server.tool()
def hang() -> str:
    """Never answer (the process stays alive): a call hung mid-way."""
    time.sleep(3600)
    return "too late"


@server.tool()
def crash() -> str:
    """Kill the server process in the middle of the call."""
    os._exit(3)


@server.tool()
def crash_once(marker: str) -> str:
    """Crash the first time (creating ``marker``), answer afterwards."""
    if not os.path.exists(marker):
        with open(marker, "w", encoding="utf-8") as file:
            file.write("crashed")
        os._exit(3)
    return "recovered"


if __name__ == "__main__":
    if sys.argv[1:] == ["hang"]:
        time.sleep(60)
    else:
        server.run("stdio")
