"""Refusing real outbound network for the duration of a test (loopback stays open).

Name resolution of anything but a loopback name or an IP literal is refused before
a DNS packet is sent; ``connect``/``connect_ex`` to a non-loopback address is
refused before the SYN. ``socket.create_connection`` goes through both.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from harness._errors import NetworkRefused

__all__ = ["deny_network", "is_loopback"]

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", ""})


def is_loopback(host: Any) -> bool:
    """True for loopback names and addresses (and for ``None``, which means local)."""
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    text = str(host).strip("[]").lower()
    if text in _LOOPBACK_NAMES or text.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(text.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _is_ip_literal(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    try:
        ipaddress.ip_address(str(host).strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    return True


@contextmanager
def deny_network(test: str | None, how: str) -> Iterator[None]:
    """Patch ``socket`` so non-loopback connections raise ``NetworkRefused``."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def refuse(host: Any) -> NetworkRefused:
        return NetworkRefused(str(host), test, how)

    def check_address(sock: socket.socket, address: Any) -> None:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return  # unix sockets and friends never leave the machine
        host = address[0] if isinstance(address, tuple) else address
        if not is_loopback(host):
            raise refuse(host)

    def connect(self: socket.socket, address: Any) -> None:
        check_address(self, address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check_address(self, address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_loopback(host) and not _is_ip_literal(host):
            raise refuse(host)
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = getaddrinfo
    try:
        yield
    finally:
        socket.socket.connect = real_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = real_connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = real_getaddrinfo
