"""A small real MCP server over stdio for the tests (the official SDK's ``MCPServer``).

``python stdio_server.py``        serves the tools below;
``python stdio_server.py hang``   reads nothing and never answers (a hung handshake).

Options for the shutdown tests (``test_mcp_shutdown.py``), acted on before the SDK is
imported, so even a server stopped while it starts has its pid written and its signals set:

``--pid-file PATH``  write this process's pid (and its child's, with ``--child``) there;
``--stubborn``       ignore SIGTERM, and keep running after stdin closes;
``--hang-list``      never answer ``tools/list`` (the server's loop is blocked);
``--child``          start a child process in the server's process group that sleeps
                     (ignoring SIGTERM too with ``--stubborn``) and holds stdout open.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from typing import Any


def _options() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", nargs="?", choices=["hang"])
    parser.add_argument("--pid-file")
    parser.add_argument("--stubborn", action="store_true")
    parser.add_argument("--hang-list", action="store_true")
    parser.add_argument("--child", action="store_true")
    return parser.parse_args()


def _start_child(stubborn: bool) -> int:
    ignore = "signal.signal(signal.SIGTERM, signal.SIG_IGN); " if stubborn else ""
    code = f"import signal, time; {ignore}time.sleep(3600)"
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL).pid


def _prepare(options: argparse.Namespace) -> None:
    if options.stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    pids = [os.getpid()]
    if options.child:
        pids.append(_start_child(options.stubborn))
    if options.pid_file:
        with open(options.pid_file + ".tmp", "w", encoding="utf-8") as file:
            file.write(" ".join(map(str, pids)))
        os.replace(options.pid_file + ".tmp", options.pid_file)


OPTIONS = _options() if __name__ == "__main__" else argparse.Namespace(hang_list=False)
if __name__ == "__main__":
    _prepare(OPTIONS)

from mcp.server.mcpserver import Context, MCPServer  # noqa: E402 - after the pid file


class HangingListServer(MCPServer):
    """Blocks its event loop in ``tools/list``: it reads nothing more, stdin EOF included."""

    async def list_tools(self) -> Any:
        time.sleep(3600)
        return await super().list_tools()


server = (HangingListServer if OPTIONS.hang_list else MCPServer)("stdio-demo")


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
    if OPTIONS.mode == "hang":
        time.sleep(60)
    else:
        server.run("stdio")
        if OPTIONS.stubborn:  # stdin closed: stay anyway
            time.sleep(3600)
