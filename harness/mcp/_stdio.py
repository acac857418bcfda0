"""A stdio MCP server's process: spawned in its own process group, ended within a grace period.

The SDK's own stdio client (``mcp.client.stdio``) ends a server the way the MCP
lifecycle asks: close its stdin, wait, then SIGTERM and SIGKILL its process group, with
fixed waits (2 s and 2 s). This transport takes the same steps with the server's
``shutdown_grace`` (half of it after stdin closes, the other half after SIGTERM), waits
for the whole group rather than the leader alone (a server that exits leaving children
behind has them ended too), and reports how the process ended so the ``McpServer`` can
warn about a server that had to be killed. POSIX only: on Windows the SDK's client (a
Job Object, killed outright) is used unchanged.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal, TextIO

__all__ = ["Ending", "stdio_transport"]

_FLUSH_SECONDS = 0.5
"""At most this long (within the grace) for messages already accepted to reach stdin."""
_REAP_SECONDS = 1.0
"""Once the group has ended (or been killed): time for the event loop to reap the leader
(only an unkillable process, stuck in the kernel, runs this out)."""
_POLL = 0.02
_PROC = "/proc"

How = Literal["exited", "terminated", "killed"]


@dataclasses.dataclass(frozen=True)
class Ending:
    """How a stdio server's process group ended when its transport closed."""

    pid: int
    """The server's pid (also its process group id)."""
    how: How
    """``exited`` on its own after stdin closed, ``terminated`` by SIGTERM, or ``killed``
    by SIGKILL."""


@contextlib.asynccontextmanager
async def stdio_transport(
    params: Any, *, grace: float, errlog: TextIO, on_end: Callable[[Ending], None]
) -> AsyncIterator[tuple[Any, Any]]:
    """Spawn ``params`` (an SDK ``StdioServerParameters``) and exchange newline-delimited
    JSON-RPC with it; on exit end its process group within ``grace`` seconds and pass
    the ``Ending`` to ``on_end`` (in the event loop's thread)."""
    import anyio
    import anyio.lowlevel
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process(
        [params.command, *params.args],
        env=get_default_environment() | (params.env or {}),
        stderr=errlog,
        cwd=params.cwd,
        start_new_session=True,  # its own process group: one signal reaches its children
    )
    # no awaits from here until the task group is entered: a cancellation in the gap
    # would leave the process running
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def read_stdout() -> None:
        from anyio.streams.text import TextReceiveStream

        assert process.stdout is not None
        text = TextReceiveStream(
            process.stdout, encoding=params.encoding, errors=params.encoding_error_handler
        )
        buffer = ""
        try:
            async with read_writer:
                async for chunk in text:
                    *lines, buffer = (buffer + chunk).split("\n")
                    for line in lines:
                        await read_writer.send(_parse(line))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass  # the session or the shutdown closed a stream: the session sees the end
        await _drain(process)

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    json = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    data = (json + "\n").encode(params.encoding, params.encoding_error_handler)
                    await process.stdin.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the server stopped reading: end pending requests
        finally:
            writer_done.set()

    async def shutdown() -> None:
        started = time.monotonic()
        read_stream.close()  # the reader drains stdout, so a server blocked writing can exit
        write_stream.close()
        with anyio.move_on_after(min(_FLUSH_SECONDS, grace / 2)):
            await writer_done.wait()
        on_end(await _end(process, grace, started))
        for stream in (read_stream, write_stream, read_writer, write_reader):
            await stream.aclose()

    async with anyio.create_task_group() as group:
        group.start_soon(read_stdout)
        group.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):  # bounded: every wait below has a deadline
                await shutdown()
            group.cancel_scope.cancel()  # a survivor's open pipe end must not block the tasks
    await anyio.lowlevel.cancel_shielded_checkpoint()


def _parse(line: str) -> Any:
    """One stdout line as a message, or the parse error as a value the session reports."""
    import mcp_types
    from mcp.shared.message import SessionMessage

    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


async def _drain(process: Any) -> None:
    """Read and drop the rest of stdout (until the pipe closes), so a server flushing
    output is not blocked on a full pipe and misses its chance to exit."""
    import anyio

    with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
        while True:
            await process.stdout.receive()


async def _end(process: Any, grace: float, started: float) -> Ending:
    """Close stdin, wait for the group until half the grace, SIGTERM it, wait until the
    grace is out, SIGKILL what is left; then close stdout and the transport."""
    import anyio.lowlevel

    pgid = process.pid  # start_new_session: the leader's pid is the group id
    how: How = "exited"
    with contextlib.suppress(Exception):
        await process.stdin.aclose()
    for sig, deadline in ((signal.SIGTERM, grace / 2), (signal.SIGKILL, grace)):
        if await _group_ended(process, started + deadline):
            break
        how = "terminated" if sig == signal.SIGTERM else "killed"
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
    reaped_by = time.monotonic() + _REAP_SECONDS
    while process.returncode is None and time.monotonic() < reaped_by:
        await anyio.sleep(_POLL)
    with contextlib.suppress(Exception):
        await process.stdout.aclose()  # a survivor outside the group may hold it open
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):  # else the transport warns at GC while a survivor holds a pipe
        with contextlib.suppress(PermissionError):
            close()
    await anyio.lowlevel.checkpoint()
    return Ending(pid=pgid, how=how)


async def _group_ended(process: Any, deadline: float) -> bool:
    """Wait until no member of the group still runs, the leader included, or until
    ``deadline`` (``time.monotonic()``); whether the group ended."""
    import anyio

    # not process.wait(): it also waits for EOF on pipes a child may hold; and a dead
    # leader counts as ended before the event loop has reaped it
    while (process.returncode is None and not os.path.isdir(_PROC)) or group_running(process.pid):
        if time.monotonic() >= deadline:
            return False
        await anyio.sleep(_POLL)
    return True


def group_running(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (zombies do not count: an orphan
    waits for a reaper that some containers' init never is)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # a member we may not signal: ambiguous, so running
    if not os.path.isdir(_PROC):
        return True  # no /proc (macOS): a zombie member counts as running
    if _running_in(pgid, str(pgid)):
        return True  # the leader: no need to read every process
    return any(_running_in(pgid, entry) for entry in os.listdir(_PROC) if entry.isdigit())


def _running_in(pgid: int, pid: str) -> bool:
    try:
        with open(f"{_PROC}/{pid}/stat", encoding="ascii", errors="replace") as file:
            stat = file.read()
    except OSError:
        return False  # gone since the listing
    # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses
    fields = stat[stat.rfind(")") + 2 :].split()
    return len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X")
