"""Refusing real outbound network while a test runs (loopback stays open).

What the guard covers, in Python: ``connect``/``connect_ex``, ``sendto``/``sendmsg``
(UDP, so ``loop.sock_sendto`` and datagram transports too) on every ``socket.socket``
(also those created before the guard started: the methods are patched on the class),
sockets made directly from ``_socket.socket`` while it is active, raw and packet
sockets (refused at creation), and name resolution: ``getaddrinfo``,
``gethostbyname(_ex)``, ``gethostbyaddr`` and ``getnameinfo`` in both ``socket`` and
``_socket``. ``localhost`` and ``*.localhost`` resolve locally, as RFC 6761 says they
must, without asking the system resolver. Loopback-equivalent client addresses are
allowed: ``127.0.0.0/8`` in any spelling (``127.1``), ``::1``, ``0.0.0.0``, ``::`` and
IPv4-mapped loopback (``::ffff:127.0.0.1``); ``allow_hosts`` adds names, addresses or
networks (CIDR).

What it cannot cover: subprocesses, C extensions that call the OS directly (libcurl,
gRPC's core, database drivers), and ``_socket.socket`` objects created before the
guard started. For a hard guarantee run the tests without a network namespace:
``unshare -rn pytest`` (Linux) or a container started with ``--network none``.

Guards nest and may end in any order: the patches are installed by the first active
guard and removed with the last; each check consults every active guard.
"""

from __future__ import annotations

import _socket
import ipaddress
import socket
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from harness._errors import NetworkRefused

__all__ = ["deny_network", "is_loopback", "refusal_in"]

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", ""})
_RESOLVERS = ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getnameinfo")
_SOCKET_METHODS = ("__init__", "connect", "connect_ex", "sendto", "sendmsg")


def _text(host: Any) -> str:
    if isinstance(host, (bytes, bytearray)):
        host = bytes(host).decode("ascii", "replace")
    return str(host).strip().strip("[]").lower().rstrip(".")


def _address(host: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``host`` as an IP address, accepting the short IPv4 spellings (``127.1``)."""
    text = _text(host).split("%", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    if text and all(part.isdigit() or part.startswith("0x") for part in text.split(".")):
        try:
            return ipaddress.IPv4Address(_socket.inet_aton(text))
        except (OSError, ValueError):
            return None
    return None


def _is_local_name(text: str) -> bool:
    return text in _LOOPBACK_NAMES or text.endswith(".localhost")


def is_loopback(host: Any) -> bool:
    """True for loopback names (``localhost``, ``*.localhost``) and for addresses a
    client reaches without leaving the machine (``None`` means local)."""
    if host is None:
        return True
    text = _text(host)
    if _is_local_name(text):
        return True
    address = _address(text)
    if address is None:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified


def refusal_in(error: BaseException) -> NetworkRefused | None:
    """The ``NetworkRefused`` among ``error`` and its causes/contexts, else ``None`` (SDKs
    wrap it: ``openai.APIConnectionError: Connection error.``)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(seen) < 64:
        if isinstance(current, NetworkRefused):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


class _Policy:
    """One active guard: the test it belongs to, how to allow, extra allowed hosts."""

    def __init__(self, test: str | None, how: str, allow_hosts: Iterable[str]) -> None:
        self.test = test
        self.how = how
        self.names: set[str] = set()
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self.addresses: set[str] = set()
        for entry in allow_hosts:
            entry = entry.strip()
            if not entry:
                continue
            try:
                self.networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                self.names.add(_text(entry))

    def allows(self, host: Any) -> bool:
        if is_loopback(host):
            return True
        text = _text(host)
        if text in self.names or text in self.addresses:
            return True
        address = _address(text)
        return address is not None and any(address in net for net in self.networks)

    def refuse(self, host: Any, what: str) -> NetworkRefused:
        shown = host.decode("ascii", "replace") if isinstance(host, bytes) else host
        error = NetworkRefused(str(shown), self.test, f"(route: {what}) {self.how}")
        error.route = what  # type: ignore[attr-defined]
        return error


_LOCK = threading.RLock()
_ACTIVE: list[_Policy] = []
_SAVED: dict[tuple[str, str], Any] = {}
_MISSING = object()


def _check(host: Any, what: str) -> None:
    for policy in list(_ACTIVE):
        if not policy.allows(host):
            raise policy.refuse(host, what)


def _learn(name: Any, results: Any) -> None:
    """Addresses an allowed (non-loopback) name resolved to are allowed too."""
    text = _text(name)
    for policy in list(_ACTIVE):
        if text in policy.names:
            for item in results:
                try:
                    policy.addresses.add(_text(item[4][0]))
                except (IndexError, TypeError):
                    continue


def _host_of(address: Any) -> Any:
    return address[0] if isinstance(address, tuple) and address else address


def _inet(sock: Any) -> bool:
    return getattr(sock, "family", None) in (socket.AF_INET, socket.AF_INET6)


def _install() -> None:
    real = {name: getattr(socket.socket, name) for name in _SOCKET_METHODS}
    for name in _SOCKET_METHODS:
        _SAVED[("socket.socket", name)] = socket.socket.__dict__.get(name, _MISSING)
    for name in _RESOLVERS:
        _SAVED[("socket", name)] = getattr(socket, name)
        _SAVED[("_socket", name)] = getattr(_socket, name)
    _SAVED[("_socket", "socket")] = _socket.socket

    def check_type(family: Any, type_: Any) -> None:
        raw = getattr(socket, "SOCK_RAW", None)
        packet = getattr(socket, "AF_PACKET", None)
        kind = int(type_) if isinstance(type_, int) else -1
        if raw is not None and kind >= 0 and (kind & 0xF) == raw:
            _check(f"raw socket family={family}", "raw sockets are refused")
        if packet is not None and family == packet:
            _check(f"packet socket family={family}", "packet sockets are refused")

    def init(self: Any, family: Any = -1, type: Any = -1, *args: Any, **kwargs: Any) -> None:
        check_type(family, type)
        real["__init__"](self, family, type, *args, **kwargs)

    def connect(self: Any, address: Any) -> Any:
        if _inet(self):
            _check(_host_of(address), "connect")
        return real["connect"](self, address)

    def connect_ex(self: Any, address: Any) -> Any:
        if _inet(self):
            _check(_host_of(address), "connect_ex")
        return real["connect_ex"](self, address)

    def sendto(self: Any, data: Any, *rest: Any) -> Any:
        if _inet(self) and rest:
            _check(_host_of(rest[-1]), "sendto")
        return real["sendto"](self, data, *rest)

    def sendmsg(self: Any, buffers: Any, *rest: Any) -> Any:
        if _inet(self) and len(rest) >= 3 and rest[2] is not None:
            _check(_host_of(rest[2]), "sendmsg")
        return real["sendmsg"](self, buffers, *rest)

    for name, fn in (
        ("__init__", init),
        ("connect", connect),
        ("connect_ex", connect_ex),
        ("sendto", sendto),
        ("sendmsg", sendmsg),
    ):
        setattr(socket.socket, name, fn)

    base = _socket.socket

    class GuardedSocket(base):  # type: ignore[valid-type,misc]
        """``_socket.socket`` while a guard is active: the same checks. ``socket.socket``
        calls ``_socket.socket.__init__`` by module lookup, so the methods name ``base``
        explicitly instead of using ``super()``."""

        __slots__ = ()

        def __init__(self, family: Any = -1, type: Any = -1, *args: Any, **kwargs: Any) -> None:
            check_type(family, type)
            base.__init__(self, family, type, *args, **kwargs)

        def connect(self, address: Any) -> Any:
            if _inet(self):
                _check(_host_of(address), "connect")
            return base.connect(self, address)

        def connect_ex(self, address: Any) -> Any:
            if _inet(self):
                _check(_host_of(address), "connect_ex")
            return base.connect_ex(self, address)

        def sendto(self, data: Any, *rest: Any) -> Any:
            if _inet(self) and rest:
                _check(_host_of(rest[-1]), "sendto")
            return base.sendto(self, data, *rest)

        def sendmsg(self, buffers: Any, *rest: Any) -> Any:
            if _inet(self) and len(rest) >= 3 and rest[2] is not None:
                _check(_host_of(rest[2]), "sendmsg")
            return base.sendmsg(self, buffers, *rest)

    _socket.socket = GuardedSocket  # type: ignore[misc]

    for module_name, module in (("socket", socket), ("_socket", _socket)):
        _patch_resolvers(module, {n: _SAVED[(module_name, n)] for n in _RESOLVERS})


def _patch_resolvers(module: Any, real: dict[str, Any]) -> None:
    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        text = _text(host) if host is not None else ""
        if host is not None and _is_local_name(text):
            # RFC 6761: localhost names resolve to loopback, never through the resolver
            names = ("family", "type", "proto", "flags")
            given = dict(zip(names, args, strict=False))
            given.update({k: kwargs[k] for k in names if k in kwargs})
            given["flags"] = int(given.get("flags", 0)) | socket.AI_NUMERICHOST
            results = []
            for loopback in ("127.0.0.1", "::1"):
                try:
                    results.extend(real["getaddrinfo"](loopback, port, **given))
                except OSError:
                    continue
            if not results:
                raise socket.gaierror(socket.EAI_NONAME, f"no loopback address for {text}")
            return results
        if host is not None and _address(text) is None:
            _check(host, "name resolution")  # an address literal resolves without DNS
        results = real["getaddrinfo"](host, port, *args, **kwargs)
        _learn(host, results)
        return results

    def gethostbyname(name: Any) -> Any:
        text = _text(name)
        if _is_local_name(text):
            return "127.0.0.1"
        _check(name, "gethostbyname")
        return real["gethostbyname"](name)

    def gethostbyname_ex(name: Any) -> Any:
        text = _text(name)
        if _is_local_name(text):
            return (text or "localhost", [], ["127.0.0.1"])
        _check(name, "gethostbyname_ex")
        return real["gethostbyname_ex"](name)

    def gethostbyaddr(address: Any) -> Any:
        text = _text(address)
        if is_loopback(text):
            return ("localhost", [], [text if _address(text) else "127.0.0.1"])
        _check(address, "gethostbyaddr")
        return real["gethostbyaddr"](address)

    def getnameinfo(sockaddr: Any, flags: Any) -> Any:
        host = _host_of(sockaddr)
        if is_loopback(host) and not (flags & socket.NI_NUMERICHOST):
            port = sockaddr[1] if isinstance(sockaddr, tuple) and len(sockaddr) > 1 else 0
            return ("localhost", str(port))
        _check(host, "getnameinfo")
        return real["getnameinfo"](sockaddr, flags)

    for name, fn in (
        ("getaddrinfo", getaddrinfo),
        ("gethostbyname", gethostbyname),
        ("gethostbyname_ex", gethostbyname_ex),
        ("gethostbyaddr", gethostbyaddr),
        ("getnameinfo", getnameinfo),
    ):
        setattr(module, name, fn)


def _uninstall() -> None:
    for (owner, name), value in _SAVED.items():
        if owner == "socket.socket":
            if value is _MISSING:
                delattr(socket.socket, name)
            else:
                setattr(socket.socket, name, value)
        elif owner == "socket":
            setattr(socket, name, value)
        else:
            setattr(_socket, name, value)
    _SAVED.clear()


@contextmanager
def deny_network(test: str | None, how: str, *, allow_hosts: Iterable[str] = ()) -> Iterator[None]:
    """Refuse non-loopback traffic and name resolution (``NetworkRefused``) in the block;
    ``allow_hosts`` adds names, addresses or CIDR networks that stay reachable."""
    policy = _Policy(test, how, allow_hosts)
    with _LOCK:
        if not _ACTIVE:
            _install()
        _ACTIVE.append(policy)
    try:
        yield
    finally:
        with _LOCK:
            _ACTIVE.remove(policy)
            if not _ACTIVE:
                _uninstall()
