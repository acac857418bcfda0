"""Shared pieces for the MCP tests: the stdio server script, a scripted shop, and what
/proc says about processes (for the tests that check no server outlives its session)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.mcp import FakeMcpServer

STDIO_SERVER = Path(__file__).with_name("stdio_server.py")
STDIO = [sys.executable, str(STDIO_SERVER)]

PROC = Path("/proc")
needs_proc = pytest.mark.skipif(not PROC.is_dir(), reason="reads processes from /proc (Linux)")


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state, ppid, pgrp, ...)."""
    try:
        text = (PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its reaper is not)."""
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def running_processes() -> dict[int, list[str]]:
    """Every live process: pid -> its stat fields."""
    found = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None and fields[0] not in ("Z", "X"):
                found[int(entry.name)] = fields
    return found


def command_line(pid: int) -> str:
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def running_servers_of_this_process() -> list[int]:
    """Live children of this process that run the test stdio server."""
    me = str(os.getpid())
    return [
        pid
        for pid, fields in running_processes().items()
        if fields[1] == me and str(STDIO_SERVER) in command_line(pid)
    ]


def still_running(
    pids: Sequence[int], *, groups: Sequence[int] = (), seconds: float = 10.0
) -> list[int]:
    """The processes among ``pids`` or in the process groups ``groups`` still running after
    waiting up to ``seconds`` (generous: a loaded machine reaps slowly)."""
    deadline = time.monotonic() + seconds
    while True:
        alive = [pid for pid in pids if running(pid)]
        if groups:
            alive += [p for p, f in running_processes().items() if int(f[2]) in groups]
        if not alive or time.monotonic() > deadline:
            return sorted(set(alive))
        time.sleep(0.05)


def pids_from(pid_file: Path, *, seconds: float = 20.0) -> list[int]:
    """The pids a server wrote with ``--pid-file`` (waits for the file)."""
    deadline = time.monotonic() + seconds
    while not pid_file.exists():
        assert time.monotonic() < deadline, f"the server never wrote {pid_file}"
        time.sleep(0.02)
    return [int(p) for p in pid_file.read_text(encoding="utf-8").split()]


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
