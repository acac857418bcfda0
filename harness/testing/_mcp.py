"""The ``harness_mcp`` fixture's factory: fake MCP servers, closed after the test."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.mcp import FakeListChange, FakeMcpServer, FakeMcpTool, McpServer

__all__ = ["McpFakes"]


class McpFakes:
    """Builds ``McpServer``s on scripted ``FakeMcpServer``s and closes them all at the end.

    ``harness_mcp("shop", [{"name": "search", "result": "[]"}], changes=[...])`` gives an
    ``McpServer`` (connected on first use); ``harness_mcp.fake("shop")`` is its fake, with
    the ``calls`` it received. Extra keywords go to ``McpServer`` (``meta=``, ``names=``...).
    """

    __test__ = False

    def __init__(self) -> None:
        self.servers: list[McpServer] = []
        self._fakes: dict[str, FakeMcpServer] = {}

    def __call__(
        self,
        name: str,
        tools: Sequence[FakeMcpTool | Mapping[str, Any]] = (),
        *,
        changes: Sequence[FakeListChange | Mapping[str, Any]] = (),
        **options: Any,
    ) -> McpServer:
        fake = FakeMcpServer(name, tools, changes=changes)
        server = McpServer(name, fake, **options)
        self._fakes[name] = fake
        self.servers.append(server)
        return server

    def fake(self, name: str) -> FakeMcpServer:
        """The fake behind the server called ``name``."""
        try:
            return self._fakes[name]
        except KeyError:
            raise KeyError(f"no fake MCP server {name!r}; made: {sorted(self._fakes)}") from None

    def close(self) -> None:
        """Close every server made (idempotent)."""
        for server in self.servers:
            server.close()
