"""Serving tools over MCP streamable HTTP on loopback (``harness serve --mcp``).

``ToolsAsMcp`` turns harness tools into an SDK server (list their definitions, call them
with the request's ``_meta`` as call context); ``McpHttpServer`` runs any such target
(or a ``FakeMcpServer``) with uvicorn in a background thread on ``127.0.0.1``, so
agents in other processes can connect to ``url``.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from harness._errors import UsageError
from harness.tools import CallContext, Tool, ToolResult, as_tool

__all__ = ["McpHttpServer", "ToolsAsMcp"]

_RESERVED = "io.modelcontextprotocol/"
_START_SECONDS = 10.0


class ToolsAsMcp:
    """Harness tools served as an MCP server (static: the list does not change)."""

    def __init__(self, name: str, tools: Sequence[Tool | Callable[..., Any]]) -> None:
        made = [as_tool(t) for t in tools]
        names = [t.name for t in made]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise UsageError(f"ToolsAsMcp {name!r}: duplicate tool names {duplicates}")
        self.name = name
        self.tools: dict[str, Tool] = {t.name: t for t in made}

    def mcp_target(self) -> Any:
        """An SDK low-level ``Server`` for the tools."""
        import mcp_types as types
        from mcp.server import Server

        async def list_tools(ctx: Any, params: Any) -> Any:
            return types.ListToolsResult(
                tools=[
                    types.Tool(
                        name=t.name,
                        description=t.full_description,
                        input_schema=dict(t.parameters),
                    )
                    for t in self.tools.values()
                ]
            )

        async def call_tool(ctx: Any, params: Any) -> Any:
            result = await self._run(ctx, params)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=result.content)],
                is_error=result.is_error,
            )

        def input_schema(name: str) -> Any:
            tool = self.tools.get(name)
            return None if tool is None else dict(tool.parameters)

        # over HTTP the SDK checks each call's Mcp-Param headers against the tool's schema:
        # without this lookup it runs the whole tools/list handler per call
        return Server(
            self.name,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            get_tool_input_schema=input_schema,
        )

    async def _run(self, ctx: Any, params: Any) -> ToolResult:
        tool = self.tools.get(str(params.name))
        if tool is None:
            return ToolResult.error(
                f"Unknown tool {params.name!r}; tools: {', '.join(self.tools)}",
                kind="unknown_tool",
            )
        meta = {k: v for k, v in dict(ctx.meta or {}).items() if not str(k).startswith(_RESERVED)}
        context = CallContext(meta, tool_name=tool.name)
        prepared = tool.prepare(json.dumps(params.arguments or {}), context)
        if isinstance(prepared, ToolResult):
            return prepared
        try:
            value = await prepared.run_async()
        except Exception as exc:
            return prepared.error_result(exc)
        return tool.to_result(value)


def _check_loopback(host: str) -> None:
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        raise UsageError(
            f"McpHttpServer serves on loopback only (127.0.0.1, ::1), got host {host!r}"
        )


class McpHttpServer:
    """Serve an MCP target (``FakeMcpServer``, ``ToolsAsMcp``, an SDK server) over
    streamable HTTP on loopback; ``port=0`` picks a free port. Use as a context manager
    or call ``start()`` / ``stop()``."""

    def __init__(self, target: Any, *, host: str = "127.0.0.1", port: int = 0) -> None:
        _check_loopback(host)
        self.target = target
        self.host = host
        self.port = port
        self._thread: threading.Thread | None = None
        self._server: Any = None
        self._socket: socket.socket | None = None

    @property
    def url(self) -> str:
        """The endpoint MCP clients connect to."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/mcp"

    def start(self) -> McpHttpServer:
        """Bind and serve in a daemon thread; returns once the server accepts requests."""
        import uvicorn

        sdk = self.target.mcp_target() if hasattr(self.target, "mcp_target") else self.target
        if hasattr(sdk, "_lowlevel_server"):  # an MCPServer
            sdk = sdk._lowlevel_server
        app = sdk.streamable_http_app(host=self.host)
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that name their
        # protocol, and accepted ones inherit it; without it Nagle holds each answer's
        # body until the client's delayed ACK of its head
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = int(sock.getsockname()[1])
        self._socket = sock
        from harness.mcp._http_protocol import OneSendH11Protocol

        config = uvicorn.Config(app, log_level="warning", lifespan="on", http=OneSendH11Protocol)
        self._server = uvicorn.Server(config)
        server = self._server
        self._thread = threading.Thread(
            target=lambda: server.run(sockets=[sock]), daemon=True, name="harness-mcp-http"
        )
        self._thread.start()
        deadline = time.monotonic() + _START_SECONDS
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise UsageError(f"the MCP HTTP server did not start on {self.url}")
            time.sleep(0.01)
        return self

    def serve_forever(self) -> None:
        """Block until interrupted (Ctrl-C), then stop."""
        try:
            while self._thread is not None and self._thread.is_alive():
                self._thread.join(0.5)
        finally:
            self.stop()

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(_START_SECONDS)
            self._thread = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def __enter__(self) -> McpHttpServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
