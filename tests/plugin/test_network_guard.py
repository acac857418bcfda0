"""The network guard's routes (issue 9 section 6), each tested with a recorder installed
BELOW the guard: the real socket functions are replaced for the test, so a route the
guard missed is recorded (and the test fails), never sent. Non-loopback addresses are
from the documentation ranges (192.0.2.0/24, 2001:db8::/32) and ``*.test`` names.
"""

from __future__ import annotations

import _socket
import asyncio
import socket
from typing import Any

import pytest

from harness.testing import NetworkRefused, deny_network, is_loopback

REMOTE = "192.0.2.1"
REMOTE6 = "2001:db8::1"


class Recorder:
    """What reached the layer below the guard."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def hosts(self, what: str) -> list[Any]:
        return [arg for name, arg in self.calls if name == what]


@pytest.fixture
def below(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    """Replace the real socket functions (never send anything) for this test."""
    rec = Recorder()

    def record(name: str, result: Any = None) -> Any:
        def fn(*args: Any, **kwargs: Any) -> Any:
            rec.calls.append((name, args))
            return result

        return fn

    def connect(self: Any, address: Any) -> None:
        rec.calls.append(("connect", address))

    def connect_ex(self: Any, address: Any) -> int:
        rec.calls.append(("connect", address))
        return 0

    def sendto(self: Any, data: Any, *rest: Any) -> int:
        rec.calls.append(("sendto", rest[-1]))
        return len(data)

    def sendmsg(self: Any, buffers: Any, *rest: Any) -> int:
        rec.calls.append(("sendmsg", rest[2] if len(rest) > 2 else None))
        return 1

    for name, fn in (
        ("connect", connect),
        ("connect_ex", connect_ex),
        ("sendto", sendto),
        ("sendmsg", sendmsg),
    ):
        monkeypatch.setattr(socket.socket, name, fn)

    class RecordingSocket(_socket.socket):  # type: ignore[misc]
        def connect(self, address: Any) -> None:
            rec.calls.append(("raw-connect", address))

        def sendto(self, data: Any, *rest: Any) -> int:
            rec.calls.append(("raw-sendto", rest[-1]))
            return len(data)

    monkeypatch.setattr(_socket, "socket", RecordingSocket)

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        rec.calls.append(("getaddrinfo", host))
        address = "198.51.100.7" if host == "db.test" else str(host)
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (address, port or 0))]

    for module in (socket, _socket):
        monkeypatch.setattr(module, "getaddrinfo", getaddrinfo)
        monkeypatch.setattr(module, "gethostbyname", record("gethostbyname", "203.0.113.5"))
        monkeypatch.setattr(
            module, "gethostbyname_ex", record("gethostbyname_ex", ("x", [], ["203.0.113.5"]))
        )
        monkeypatch.setattr(module, "gethostbyaddr", record("gethostbyaddr", ("x", [], [])))
        monkeypatch.setattr(module, "getnameinfo", record("getnameinfo", ("x", "80")))
    return rec


def _refused(fn: Any, *args: Any) -> NetworkRefused:
    with pytest.raises(NetworkRefused) as info:
        fn(*args)
    return info.value


def test_udp_sendto_and_sendmsg_are_refused(below: Recorder) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        with deny_network("t", "how"):
            assert _refused(sock.sendto, b"x", (REMOTE, 53)).host == REMOTE
            _refused(sock.sendto, b"x", 0, (REMOTE, 53))
            _refused(sock.sendmsg, [b"x"], [], 0, (REMOTE, 53))
            assert sock.sendto(b"x", ("127.0.0.1", 53)) == 1  # loopback reaches the recorder
        assert below.hosts("sendto") == [("127.0.0.1", 53)]
        assert below.hosts("sendmsg") == []


def test_loop_sock_sendto_is_refused(below: Recorder) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.setblocking(False)
            with deny_network("t", "how"), pytest.raises(NetworkRefused):
                await loop.sock_sendto(sock, b"x", (REMOTE, 53))  # type: ignore[attr-defined,unused-ignore]  # 3.11+

    asyncio.run(main())
    assert below.hosts("sendto") == []


def test_ipv6_connect_to_a_remote_address_is_refused(below: Recorder) -> None:
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock, deny_network("t", "how"):
        assert _refused(sock.connect, (REMOTE6, 443, 0, 0)).host == REMOTE6
        _refused(sock.connect_ex, (REMOTE6, 443, 0, 0))
        sock.connect(("::1", 443, 0, 0))
    assert below.hosts("connect") == [("::1", 443, 0, 0)]


def test_raw_and_packet_sockets_are_refused_at_creation(below: Recorder) -> None:
    with deny_network("t", "how"):
        error = _refused(socket.socket, socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        assert "raw" in error.host
        _refused(_socket.socket, socket.AF_INET, socket.SOCK_RAW)
        if hasattr(socket, "AF_PACKET"):
            _refused(socket.socket, socket.AF_PACKET, socket.SOCK_DGRAM)


@pytest.mark.parametrize("module", [socket, _socket], ids=["socket", "_socket"])
def test_every_resolver_is_guarded(below: Recorder, module: Any) -> None:
    with deny_network("t", "how"):
        _refused(module.getaddrinfo, "api.example.test", 443)
        _refused(module.gethostbyname, "api.example.test")
        _refused(module.gethostbyname_ex, "api.example.test")
        _refused(module.gethostbyaddr, REMOTE)
        _refused(module.getnameinfo, (REMOTE, 80), 0)
        _refused(module.getaddrinfo, "evillocalhost.com", 443)  # not a .localhost name
        _refused(module.getaddrinfo, "evillocalhost", 443)
        _refused(module.gethostbyname, "x.evillocalhost")
        _refused(module.gethostbyname, "localhost.evil.test")
    assert below.calls == []


def test_localhost_names_resolve_locally_never_through_the_resolver(below: Recorder) -> None:
    with deny_network("t", "how"):
        results = socket.getaddrinfo("x.evil.localhost", 8080)
        assert {r[4][0] for r in results} <= {"127.0.0.1", "::1"}
        # only AI_NUMERICHOST is added to the caller's flags (none here): no canonical name
        assert results and all(r[3] == "" for r in results)
        assert socket.gethostbyname("x.evil.localhost") == "127.0.0.1"
        assert socket.gethostbyname_ex("LOCALHOST")[2] == ["127.0.0.1"]
        assert socket.gethostbyaddr("127.0.0.1")[0] == "localhost"
        assert socket.getnameinfo(("127.0.0.1", 80), 0) == ("localhost", "80")
    # the resolver below only ever saw loopback literals, never the name
    assert set(below.hosts("getaddrinfo")) <= {"127.0.0.1", "::1"}
    assert below.hosts("gethostbyname") == [] and below.hosts("gethostbyaddr") == []


def test_underscore_socket_objects_made_during_the_guard_are_guarded(below: Recorder) -> None:
    with deny_network("t", "how"):
        raw = _socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            _refused(raw.sendto, b"x", (REMOTE, 53))
            _refused(raw.connect, (REMOTE, 53))
        finally:
            raw.close()
    assert below.hosts("raw-sendto") == [] and below.hosts("raw-connect") == []
    assert _socket.socket.__name__ == "RecordingSocket"  # restored to what was below


def test_sockets_created_before_the_guard_are_guarded(below: Recorder) -> None:
    early = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with deny_network("t", "how"):
            _refused(early.connect, (REMOTE, 80))
            _refused(early.connect, ("api.example.test", 80))  # C-level resolution in connect
    finally:
        early.close()
    assert below.hosts("connect") == []


@pytest.mark.parametrize(
    "address",
    [("0.0.0.0", 80), ("127.1", 80), ("127.255.0.9", 80), ("::ffff:127.0.0.1", 80, 0, 0)],
)
def test_loopback_equivalent_addresses_are_allowed(below: Recorder, address: Any) -> None:
    family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock, deny_network("t", "how"):
        sock.connect(address)
    assert below.hosts("connect") == [address]


def test_allow_hosts_names_addresses_and_networks(below: Recorder) -> None:
    allow = ["db.test", "192.0.2.0/28", ""]
    with (
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock,
        deny_network("t", "h", allow_hosts=allow),
    ):
        sock.connect(("192.0.2.5", 5432))
        _refused(sock.connect, ("192.0.2.99", 5432))
        (result,) = socket.getaddrinfo("db.test", 5432)
        sock.connect(result[4])  # the address the allowed name resolved to
        _refused(socket.getaddrinfo, "other.test", 80)
    assert below.hosts("connect") == [("192.0.2.5", 5432), ("198.51.100.7", 5432)]


def test_guards_nest_and_end_in_any_order(below: Recorder) -> None:
    first, second = deny_network("a", "how"), deny_network("b", "how")
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        error = _refused(sock.connect, (REMOTE, 80))
        assert error.test == "b"
        second.__exit__(None, None, None)
        sock.connect((REMOTE, 80))  # unguarded now: the recorder below takes it
    assert below.hosts("connect") == [(REMOTE, 80)]


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("0.0.0.0", True),
        ("127.1", True),
        ("::ffff:127.0.0.1", True),
        ("::", True),
        ("x.evil.localhost", True),
        ("localhost.", True),
        ("evillocalhost.com", False),
        ("evillocalhost", False),
        ("x.evillocalhost", False),
        ("localhost.evil.test", False),
        ("::ffff:192.0.2.1", False),
        ("2001:db8::1", False),
        ("1.2.3", False),
    ],
)
def test_is_loopback_spellings(host: str, expected: bool) -> None:
    assert is_loopback(host) is expected


# -- the plugin: session-scoped fixtures and --harness-allow-hosts ------------------------------

RECORDER_CONFTEST = """
import socket
import pytest

SEEN = []

def _connect(self, address):  # below the guard: record, never send
    SEEN.append(address)

socket.socket.connect = _connect

@pytest.fixture(scope="session")
def remote_session():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.connect(("192.0.2.1", 80))
    finally:
        sock.close()
    return "connected"

def pytest_sessionfinish(session):
    print("SEEN", SEEN)
"""


def test_session_scoped_fixture_setup_is_guarded(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(RECORDER_CONFTEST)
    pytester.makepyfile(
        """
        def test_uses_it(remote_session, harness_runner):
            pass
        """
    )
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "real network access to '192.0.2.1' refused" in out
    assert "SEEN []" in out


@pytest.mark.slow
def test_allow_hosts_option_and_ini(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(RECORDER_CONFTEST)
    pytester.makepyfile(
        """
        import socket

        def test_allowed():
            with socket.socket() as sock:
                sock.connect(("192.0.2.1", 80))
        """
    )
    result = pytester.runpytest_subprocess(
        "-s",
        "-p",
        "no:cacheprovider",
        "--harness-network=deny-all",
        "--harness-allow-hosts=db.test, 192.0.2.0/24",
    )
    result.assert_outcomes(passed=1)
    assert "SEEN [('192.0.2.1', 80)]" in result.stdout.str()
    pytester.makeini("[pytest]\nharness_network = deny-all\nharness_allow_hosts = 192.0.2.1\n")
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    pytester.makeini("[pytest]\nharness_network = deny-all\n")
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert "SEEN []" in result.stdout.str()


def test_localhost_resolves_through_the_real_resolver_with_default_flags() -> None:
    # No recorder below: the system resolver itself gets the loopback literals, with
    # only AI_NUMERICHOST added to the caller's flags (a bad flag set fails here).
    with deny_network("t", "how"):
        results = socket.getaddrinfo("localhost", 8080, type=socket.SOCK_STREAM)
        plain = socket.getaddrinfo("app.localhost", 8080)
    assert results and {r[4][0] for r in results} <= {"127.0.0.1", "::1"}
    assert all(r[1] == socket.SOCK_STREAM and r[3] == "" for r in results)
    assert plain and {r[4][0] for r in plain} <= {"127.0.0.1", "::1"}
