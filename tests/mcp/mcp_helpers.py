"""Shared pieces for the MCP tests: the stdio server script and a scripted shop."""

from __future__ import annotations

import sys
from pathlib import Path

from harness.mcp import FakeMcpServer

STDIO_SERVER = Path(__file__).with_name("stdio_server.py")
STDIO = [sys.executable, str(STDIO_SERVER)]

SEARCH_SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string"}},
    "required": ["q"],
}


def shop_fake() -> FakeMcpServer:
    """Two tools; the first call of ``login`` adds ``buy`` and removes ``echo``."""
    return FakeMcpServer(
        "shop",
        [
            {
                "name": "search",
                "description": "Search products",
                "input_schema": SEARCH_SCHEMA,
                "result": {"hits": ["a1"]},
            },
            {"name": "echo", "description": "Echo", "echo": True},
            {"name": "login", "description": "Log in", "result": "ok"},
        ],
        changes=[
            {
                "after_call": "login",
                "add": [{"name": "buy", "description": "Buy", "result": "bought"}],
                "remove": ["echo"],
            }
        ],
    )
