"""uvicorn's h11 protocol with an answer's writes joined: what one turn of the event loop
writes to a connection leaves in one send.

uvicorn writes a response's head, its body and its end as separate ``transport.write``
calls, each a ``send`` of its own: a plain JSON-RPC answer took two segments (the client
woke for the head, then for the body) and two system calls. Here the writes of a turn
are joined and sent at the start of the next (``call_soon``): a plain answer is one
send, and a streamed event still leaves as soon as it is written.

Imported only by ``McpHttpServer.start`` (uvicorn is a dependency of the ``mcp`` extra).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["OneSendH11Protocol"]


class _JoinedWrites:
    """A transport whose writes in one turn of the loop leave together; every other
    call goes to the transport (a close first sends what is pending)."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(bytes(data))

    def _flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            self._transport.write(data)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class OneSendH11Protocol(H11Protocol):
    """uvicorn's h11 protocol over a transport that joins an answer's writes."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        joined: Any = _JoinedWrites(transport, self.loop)
        super().connection_made(joined)
