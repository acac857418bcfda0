"""``McpServer``: one MCP server as a source of harness tools, connected on first use.

Nothing is opened at construction: the handshake and the first ``tools/list`` happen
on first use (the first request that needs the tools), in a private event loop thread,
so a target given as a function can read credentials that exist only at run time.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import os
import queue
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, TimeoutError as FutureTimeout
from typing import Any, TextIO

from harness._errors import UsageError
from harness._extras import require
from harness._validation import choice_problem, int_problem, seconds_problem
from harness.mcp._convert import (
    Listed,
    NamePolicy,
    Skipped,
    to_result,
    to_tool,
    without_collisions,
)
from harness.mcp._errors import (
    McpCallError,
    McpConnectError,
    McpServerKilled,
    McpTimeout,
    McpToolError,
)
from harness.mcp._meta import MetaConverter, meta_for, pass_through
from harness.mcp._stdio import Ending, stdio_transport
from harness.mcp._thread import LoopThread
from harness.tools import CallContext, Tool, ToolResult, is_valid_name

__all__ = ["Connected", "McpServer", "ToolFilter", "require_mcp"]

ToolFilter = Callable[[Tool], bool]
"""Keeps a listed tool when it returns true (``tool.metadata['mcp_tool']`` is the
server's name for it)."""

DEFAULT_CALL_TIMEOUT = 60.0
"""Seconds a ``tools/call`` may take unless ``McpServer(call_timeout=...)`` says otherwise."""
DEFAULT_MAX_PAGES = 1000
"""Pages of ``tools/list`` read at most unless ``McpServer(max_pages=...)`` says otherwise."""
DEFAULT_SHUTDOWN_GRACE = 4.0
"""Seconds a stdio server gets to exit on close unless ``McpServer(shutdown_grace=...)``
says otherwise (the SDK's own client waits 2 s after closing stdin, 2 s after SIGTERM)."""
_CLOSE_MARGIN = 2.0
"""Beyond the grace: for the event loop to reap a killed server and close the session."""
_SETTLE_CHECKPOINTS = 8
_CLOSED_CODE = -32000  # mcp_types.CONNECTION_CLOSED


def require_mcp() -> None:
    """Import the ``mcp`` SDK or raise an ``ImportError`` naming the extra to install."""
    require("mcp", "MCP support (the official MCP SDK)")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Connected:
    """When and how a server was connected (the lazy handshake happened)."""

    server: str
    protocol_version: str
    tools: tuple[str, ...]
    """Model-visible names of the tools it offered."""
    seconds: float
    """How long the handshake and first listing took."""
    at: float
    """Wall-clock time of the connection (``time.time()``)."""


def _describe(exc: BaseException) -> str:
    """A one-line account of ``exc``, looking inside exception groups."""
    while isinstance(getattr(exc, "exceptions", None), (list, tuple)) and exc.exceptions:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    text = str(exc) or "(no message)"
    return f"{type(exc).__name__}: {text}"


def _is_closed(exc: BaseException) -> bool:
    import anyio

    if isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, EOFError)):
        return True
    return getattr(exc, "code", None) == _CLOSED_CODE


def _resolve_target(name: str, target: Any, stdio: Callable[[Any], Any]) -> Any:
    """The SDK ``Client`` target for ``target`` (called lazily, at connect time);
    ``stdio`` makes the transport for ``StdioServerParameters``."""
    from mcp import StdioServerParameters
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

    if hasattr(target, "mcp_target"):  # FakeMcpServer and friends
        return target.mcp_target()
    if isinstance(target, StdioServerParameters):
        return stdio(target)
    if isinstance(target, (Server, MCPServer)):
        return target
    if isinstance(target, str):
        if not target.startswith(("http://", "https://")):
            raise UsageError(
                f"MCP server {name!r}: a text target must be a streamable HTTP URL "
                f"(http://127.0.0.1:8000/mcp), got {target!r}; give a command as a list"
            )
        return target
    if isinstance(target, Sequence) and target and all(isinstance(p, str) for p in target):
        return _resolve_target(
            name, StdioServerParameters(command=target[0], args=list(target[1:])), stdio
        )
    if callable(target):
        return _resolve_target(name, target(), stdio)
    raise UsageError(
        f"MCP server {name!r}: cannot connect to {target!r}; give a URL, a command line "
        "(list of strings), StdioServerParameters, an SDK Server/MCPServer, a FakeMcpServer, "
        "or a function returning one of these"
    )


def _server_stderr() -> TextIO:
    """Where a stdio server's stderr goes: the process's real stderr (the SDK's default,
    ``sys.stderr`` at its import time, may be a capture object without a file descriptor)."""
    stream = sys.__stderr__
    try:
        if stream is not None:
            stream.fileno()
            return stream
    except (OSError, ValueError):
        pass
    global _DEVNULL
    if _DEVNULL is None:
        _DEVNULL = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - kept for the process
    return _DEVNULL


_DEVNULL: TextIO | None = None


class _Session:
    """An open client session living in the loop thread."""

    def __init__(self, client: Any, protocol_version: str, ended: threading.Event) -> None:
        self.client = client
        self.protocol_version = protocol_version
        self.hold: Future[None] = Future()
        """The holding task (set by ``_open``): done once the session is gone."""
        self.ended = ended
        """Set once the holding task has finished (its transport closed, a stdio server
        ended); cancelling ``hold`` marks it done at once, before that."""


_OPEN: weakref.WeakSet[McpServer] = weakref.WeakSet()
"""Servers with an open session, closed at interpreter exit if their owner did not."""


@atexit.register
def _close_open_servers() -> None:
    # atexit runs before daemon threads stop: each session's loop is still there to
    # end its server within the grace, where the interpreter would leave it running.
    # ExitStack: every server is closed even if one close raises (a warning made an error)
    with contextlib.ExitStack() as stack:
        for server in list(_OPEN):
            stack.callback(server.close)


class McpServer:
    """An MCP server whose tools become harness tools.

    Args:
        name: the server's name in the harness (traces, errors, the ``prefix`` policy).
        target: where it is: a streamable HTTP URL, a command line (list) for stdio, an
            SDK ``StdioServerParameters``, an SDK ``Server``/``MCPServer`` (in-memory), a
            ``FakeMcpServer``, or a function returning one of these (called on first use).
        names: ``keep`` (default: the server's tool names; collisions across servers are
            an error) or ``prefix`` (``<name>_<tool>``).
        meta: the call context -> ``_meta`` converter (default ``pass_through()``).
        filter: keep only the listed tools for which it returns true.
        init_timeout: seconds the handshake and first listing may take.
        call_timeout: seconds one ``tools/call`` may take (default 60; ``None``: no limit
            but the loop's ``tool_timeout``); past it the call is cancelled and the model
            reads an error result (``McpTimeout``).
        max_pages: pages of ``tools/list`` read at most (default 1000); a listing cut
            there, or by a cursor the server repeats, is reported by a ``StrategyWarning``.
        mode: the SDK's connect mode (``auto``, ``legacy`` or a protocol version).
        shutdown_grace: seconds a stdio server gets to exit when the session ends (on
            ``close()``, at interpreter exit, or after a handshake or ``tools/list`` that
            timed out): its stdin is closed and it has half of them, then its process
            group gets SIGTERM and the other half, then SIGKILL and an
            ``McpServerKilled`` warning (default 4).
    """

    def __init__(
        self,
        name: str,
        target: Any,
        *,
        names: NamePolicy = "keep",
        meta: MetaConverter | None = None,
        filter: ToolFilter | None = None,
        init_timeout: float = 10.0,
        call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        max_pages: int = DEFAULT_MAX_PAGES,
        mode: str = "auto",
        shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE,
    ) -> None:
        problems = []
        if not isinstance(name, str) or not is_valid_name(name):
            problems.append(f"name must match ^[a-zA-Z0-9_-]{{1,64}}$, got {name!r}")
        names_problem = choice_problem(names, NamePolicy, name="names")
        if names_problem:
            problems.append(names_problem)
        if meta is not None and not callable(meta):
            problems.append(f"meta must be a converter function, got {meta!r}")
        if filter is not None and not callable(filter):
            problems.append(f"filter must be a function (Tool) -> bool, got {filter!r}")
        for problem in (
            seconds_problem(init_timeout, name="init_timeout", positive=True),
            seconds_problem(call_timeout, name="call_timeout", positive=True, optional=True),
            seconds_problem(shutdown_grace, name="shutdown_grace", positive=True),
        ):
            if problem is not None:
                problems.append(problem)
        pages_problem = int_problem(max_pages, name="max_pages", minimum=1)
        if pages_problem is not None:
            problems.append(pages_problem)
        if target is None:
            problems.append("target is missing")
        if problems:
            raise UsageError(f"McpServer {name!r}: " + "; ".join(problems))
        self.name = name
        self.target = target
        self.names: NamePolicy = names
        self.meta: MetaConverter = meta or pass_through()
        self.filter = filter
        self.init_timeout = float(init_timeout)
        self.call_timeout = None if call_timeout is None else float(call_timeout)
        self.max_pages = max_pages
        self.mode = mode
        self.shutdown_grace = float(shutdown_grace)
        self._lock = threading.RLock()
        self._generation_lock = threading.Lock()
        self._thread: LoopThread | None = None
        self._session: _Session | None = None
        self._listed: Listed | None = None
        self._listed_generation = -1
        self.generation = 0
        """Incremented on every ``notifications/tools/list_changed`` from the server."""
        self.connections: list[Connected] = []
        """Every successful connection, oldest first."""
        self._unreported: list[Connected] = []
        self._endings: queue.SimpleQueue[Ending] = queue.SimpleQueue()
        """How stdio server processes ended (put by the loop thread), not yet reported."""

    def __repr__(self) -> str:
        state = "connected" if self._session is not None else "not connected"
        return f"McpServer({self.name!r}, {state})"

    # -- connection ---------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """True while a session is open."""
        return self._session is not None and not self._session.hold.done()

    def connect(self) -> None:
        """Open the session and list the tools, unless already connected (thread-safe)."""
        with self._lock:
            if self.connected:
                return
            self._session = None
            started = time.perf_counter()
            session = self._open()
            self._session = session
            _OPEN.add(self)
            self._listed_generation = -1
            listed = self._refresh_locked()
            info = Connected(
                server=self.name,
                protocol_version=session.protocol_version,
                tools=tuple(t.name for t in listed.tools),
                seconds=time.perf_counter() - started,
                at=time.time(),
            )
            self.connections.append(info)
            self._unreported.append(info)

    async def aconnect(self) -> None:
        """``connect()`` without blocking the running event loop."""
        await asyncio.to_thread(self.connect)

    def _open(self) -> _Session:
        require_mcp()
        target = _resolve_target(self.name, self.target, self._stdio)
        if self._thread is None or self._thread.stopped:
            self._thread = LoopThread(self.name)
        ready: Future[_Session] = Future()
        ended = threading.Event()
        hold = self._thread.submit(self._hold, target, ready, ended)
        try:
            session = ready.result(timeout=self.init_timeout)
        except FutureTimeout:
            self._end(hold, ended)
            raise McpTimeout(
                self.name,
                f"the server did not finish the handshake and tool listing within "
                f"{self.init_timeout:g}s (init_timeout); is it hanging on initialise?",
            ) from None
        except UsageError:
            self._end(hold, ended)
            raise
        except Exception as exc:
            self._end(hold, ended)
            raise McpConnectError(
                self.name, f"cannot connect ({_describe(exc)}); is the server running?"
            ) from exc
        session.hold = hold
        return session

    def _stdio(self, params: Any) -> Any:
        """The transport to a stdio server: ended within ``shutdown_grace`` on POSIX."""
        if sys.platform == "win32":  # the SDK's Job Object, killed outright on close
            from mcp.client.stdio import stdio_client

            return stdio_client(params, errlog=_server_stderr())
        return stdio_transport(
            params, grace=self.shutdown_grace, errlog=_server_stderr(), on_end=self._endings.put
        )

    def _end(self, hold: Future[None], ended: threading.Event) -> None:
        """Cancel a session's task and wait until it has closed (a stdio server ended
        within the grace); then warn about a server that had to be killed."""
        hold.cancel()
        ended.wait(self.shutdown_grace + _CLOSE_MARGIN)
        while True:
            try:
                ending = self._endings.get_nowait()
            except queue.Empty:
                return
            if ending.how == "killed":
                warnings.warn(
                    McpServerKilled(self.name, ending.pid, self.shutdown_grace), stacklevel=3
                )

    async def _hold(self, target: Any, ready: Future[_Session], ended: threading.Event) -> None:
        """The session's task: open it, hand it over, keep it open until cancelled;
        ``ended`` is set once it has closed."""
        import anyio
        from mcp import Client

        try:
            async with Client(target, mode=self.mode, message_handler=self._on_message) as client:
                session = _Session(client, client.protocol_version, ended)
                async with anyio.create_task_group() as group:
                    group.start_soon(self._listen, client)
                    ready.set_result(session)
                    await anyio.sleep_forever()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
            raise
        finally:
            ended.set()

    async def _listen(self, client: Any) -> None:
        """Keep a ``subscriptions/listen`` stream open (2026-07-28 servers) so tool list
        changes are delivered; older servers send them unasked."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    pass  # the notification also reaches _on_message, which counts it
        except Exception:  # a server without subscriptions: changes are not pushed
            return

    async def _on_message(self, message: Any) -> None:
        # runs in the loop thread: never take self._lock here (a listing holds it while
        # waiting for this very loop)
        method = getattr(message, "method", None)
        if method == "notifications/tools/list_changed":
            with self._generation_lock:
                self.generation += 1

    def close(self) -> None:
        """Close the session (a stdio server ends within ``shutdown_grace``, or is killed
        with an ``McpServerKilled`` warning) and stop the loop thread; a later use
        reconnects."""
        with self._lock:
            session, self._session = self._session, None
            _OPEN.discard(self)
            if session is not None:
                self._end(session.hold, session.ended)
            if self._thread is not None:
                self._thread.stop()
                self._thread = None

    def __enter__(self) -> McpServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def take_connections(self) -> list[Connected]:
        """Connections not yet reported by a strategy (each is handed out once)."""
        with self._lock:
            out, self._unreported = self._unreported, []
        return out

    # -- listing ------------------------------------------------------------------------

    def _refresh_locked(self) -> Listed:
        session = self._session
        assert session is not None and self._thread is not None
        generation = self.generation
        listing = self._thread.submit(_list_all, session.client, self.max_pages)
        try:
            raw = listing.result(self.init_timeout)
        except FutureTimeout:
            listing.cancel()
            self._session = None
            self._end(session.hold, session.ended)
            raise McpTimeout(
                self.name,
                f"tools/list did not answer within {self.init_timeout:g}s (init_timeout); "
                "the session was closed (a stdio server is ended) and the next use reconnects",
            ) from None
        except Exception as exc:
            if _is_closed(exc):
                self._session = None
            raise McpConnectError(self.name, f"tools/list failed ({_describe(exc)})") from exc
        self._listed = self._convert(raw)
        self._listed_generation = generation
        return self._listed

    def _convert(self, raw: _Pages) -> Listed:
        tools: list[Tool] = []
        skipped: list[Skipped] = []
        for entry in raw.tools:
            made = to_tool(self.name, entry, self.names, self._handler_for(str(entry.name)))
            if isinstance(made, Skipped):
                skipped.append(made)
            elif self.filter is None or self.filter(made):
                tools.append(made)
        tools, collisions = without_collisions(tools)
        signature = {t.name: (t.description, t.parameters) for t in tools}
        return Listed(
            tools=tuple(tools),
            skipped=(*skipped, *collisions),
            signature=signature,
            incomplete=raw.incomplete,
        )

    def listing(self) -> Listed:
        """The current listing: connects on first use, lists again after a change."""
        with self._lock:
            if not self.connected:
                self.connect()
            elif self._listed is None or self._listed_generation != self.generation:
                self._refresh_locked()
            assert self._listed is not None
            return self._listed

    def tools(self) -> tuple[Tool, ...]:
        """The server's tools as harness tools (connects on first use)."""
        return self.listing().tools

    @property
    def skipped(self) -> tuple[Skipped, ...]:
        """Tools of the last listing that cannot be offered, with the reason."""
        return self._listed.skipped if self._listed is not None else ()

    @property
    def incomplete(self) -> str | None:
        """Why the last listing stopped before the server's last page (``None``: complete)."""
        return self._listed.incomplete if self._listed is not None else None

    @property
    def listed_generation(self) -> int:
        """The ``generation`` the current listing reflects (-1 before the first)."""
        return self._listed_generation

    @property
    def stale(self) -> bool:
        """True when the server announced a change not listed yet."""
        return self._listed is not None and self._listed_generation != self.generation

    def tool_by_name(self, name: str) -> Tool | None:
        """The tool with this model-visible (or server) name, or ``None``."""
        for tool in self.tools():
            if name in (tool.name, tool.metadata.get("mcp_tool")):
                return tool
        return None

    def required_tool_by_name(self, name: str) -> Tool:
        """The tool with this name, or ``McpToolError`` listing the available names."""
        tool = self.tool_by_name(name)
        if tool is not None:
            return tool
        for skipped in self.skipped:
            if skipped.tool == name:
                raise McpToolError(self.name, skipped.problem, tool=name)
        available = ", ".join(t.name for t in self.tools()) or "(none)"
        raise McpToolError(
            self.name, f"no such tool on the server; available: {available}", tool=name
        )

    # -- calling ------------------------------------------------------------------------

    def _handler_for(self, tool: str) -> Callable[..., Any]:
        async def call_mcp_tool(arguments: dict[str, Any], context: CallContext) -> ToolResult:
            return await self.acall(tool, arguments, context)

        return call_mcp_tool

    async def acall(
        self, tool: str, arguments: Mapping[str, Any], context: CallContext | None = None
    ) -> ToolResult:
        """Call ``tool`` (the server's name for it) with ``context`` as ``_meta``."""
        if not self.connected:
            await self.aconnect()
        session = self._session
        thread = self._thread
        if session is None or thread is None:  # closed concurrently
            raise McpCallError(self.name, "the session was closed", tool=tool)
        context = context if context is not None else CallContext()
        meta = meta_for(self.meta, context)
        future = thread.submit(_call, session.client, tool, dict(arguments), meta)
        try:
            result = await asyncio.wait_for(asyncio.wrap_future(future), self.call_timeout)
        except asyncio.TimeoutError:  # wait_for cancelled the call on the session's loop
            raise McpTimeout(
                self.name,
                f"tools/call did not answer within {self.call_timeout:g}s (call_timeout); "
                "the call was cancelled. Is the server stuck?",
                tool=tool,
            ) from None
        except Exception as exc:
            if _is_closed(exc) or session.hold.done():
                with self._lock:
                    if self._session is session:
                        self._session = None  # the next use reconnects
                raise McpCallError(
                    self.name,
                    f"the connection was lost during the call ({_describe(exc)}); did the "
                    "server crash? The next use reconnects",
                    tool=tool,
                ) from exc
            raise McpCallError(self.name, f"the call failed ({_describe(exc)})", tool=tool) from exc
        # let notifications the server sent before its answer (list changes) be handled
        await asyncio.wrap_future(thread.submit(_settle))
        return to_result(self.name, tool, result, hidden=context.values())

    def call(
        self, tool: str, arguments: Mapping[str, Any], context: CallContext | None = None
    ) -> ToolResult:
        """Sync ``acall`` (from code that runs no event loop)."""
        return asyncio.run(self.acall(tool, arguments, context))


@dataclasses.dataclass(frozen=True)
class _Pages:
    """What ``tools/list`` gave over its pages, and why it stopped early (if it did)."""

    tools: list[Any]
    incomplete: str | None = None


async def _list_all(client: Any, max_pages: int) -> _Pages:
    tools: list[Any] = []
    seen: set[str] = set()
    cursor: str | None = None
    for number in range(1, max_pages + 1):
        page = await client.list_tools(cursor=cursor, cache_mode="refresh")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return _Pages(tools)
        if cursor in seen:
            return _Pages(
                tools,
                f"the server sent the cursor {cursor[:40]!r} again after {number} page(s); "
                f"listing stopped there with {len(tools)} tool(s)",
            )
        seen.add(cursor)
    return _Pages(
        tools,
        f"the listing stopped after {max_pages} pages (max_pages) with {len(tools)} tool(s); "
        "the server has more: raise McpServer(max_pages=...)",
    )


async def _settle() -> None:
    import anyio

    for _ in range(_SETTLE_CHECKPOINTS):
        await anyio.sleep(0)


async def _call(client: Any, tool: str, arguments: dict[str, Any], meta: Any) -> Any:
    return await client.call_tool(tool, arguments, meta=meta)
