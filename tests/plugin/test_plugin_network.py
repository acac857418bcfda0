"""Refusing real outbound network: deny (harness tests), deny-all, allow; loopback stays open.

No test here lets a packet leave the machine: refused connections fail before the
real ``connect`` runs, and the allowed cases only connect to 127.0.0.1.
"""

from __future__ import annotations

import socket

import pytest

from harness.testing import NetworkRefused, deny_network, is_loopback

UNROUTABLE = "10.255.255.1"

NETWORK_TESTS = f"""
import socket
import pytest
from harness.testing import NetworkRefused

def _connect():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.connect(("{UNROUTABLE}", 9))
    finally:
        sock.close()

def test_harness_test(harness_runner):
    with pytest.raises(NetworkRefused) as info:
        _connect()
    print("REFUSED", info.value)

def test_plain_test():
    print("GUARD", socket.socket.connect.__name__, socket.getaddrinfo.__module__)
"""


def test_deny_refuses_in_harness_tests_only(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_net=NETWORK_TESTS)
    result = pytester.runpytest("-s")
    result.assert_outcomes(passed=2)
    out = result.stdout.str()
    assert (
        f"REFUSED real network access to '{UNROUTABLE}' refused in test "
        "test_net.py::test_harness_test" in out
    )
    assert "--harness-network=allow" in out
    assert "GUARD connect socket" in out  # the real socket functions in a plain test


def test_deny_all_refuses_everywhere(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_net=NETWORK_TESTS
        + """
def test_plain_refused():
    with pytest.raises(NetworkRefused):
        _connect()
"""
    )
    result = pytester.runpytest("-s", "--harness-network=deny-all")
    result.assert_outcomes(passed=3)
    assert "GUARD connect harness.testing._network" in result.stdout.str()


def test_allow_installs_no_guard(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import socket

        def test_x(harness_runner):
            assert socket.socket.connect.__qualname__ == "socket.connect"
            assert socket.getaddrinfo.__module__ == "socket"
        """
    )
    pytester.runpytest("--harness-network=allow").assert_outcomes(passed=1)


def test_fixture_override_and_ini_choose_the_mode(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest
        from harness.testing import HarnessConfig

        @pytest.fixture
        def harness_config():
            return HarnessConfig(network="deny-all")
        """
    )
    pytester.makepyfile(
        """
        import socket

        def test_plain():
            assert socket.socket.connect.__module__ == "harness.testing._network"
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)
    pytester.makeini("[pytest]\nharness_network = allow\n")
    pytester.runpytest().assert_outcomes(passed=1)  # the fixture beats the ini
    result = pytester.runpytest("--harness-network=allow")
    result.assert_outcomes(failed=1)  # the command line beats the fixture: no guard


def test_refusal_happens_before_any_connect() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        with deny_network("t::x", "Allow it."):
            with pytest.raises(NetworkRefused) as info:
                sock.connect((UNROUTABLE, 443))
            with pytest.raises(NetworkRefused):
                sock.connect_ex((UNROUTABLE, 443))
            with pytest.raises(NetworkRefused):
                socket.create_connection((UNROUTABLE, 443), timeout=0.1)
            with pytest.raises(NetworkRefused, match=r"'api\.openai\.com'"):
                socket.getaddrinfo("api.openai.com", 443)
        # never connected: a connected socket would have a peer
        with pytest.raises(OSError, match="not connected"):
            sock.getpeername()
    finally:
        sock.close()
    assert info.value.host == UNROUTABLE
    assert info.value.test == "t::x"
    assert str(info.value).endswith("Allow it.")
    assert socket.socket.connect.__qualname__ == "socket.connect"


def test_loopback_and_unix_sockets_stay_open() -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        with deny_network(None, "Allow it."):
            assert socket.getaddrinfo("localhost", port)
            assert socket.getaddrinfo(UNROUTABLE, 80)  # a literal: resolved without DNS
            with socket.create_connection(("127.0.0.1", port), timeout=1) as client:
                assert client.getpeername()[1] == port
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
                assert other.connect_ex(("127.0.0.1", port)) == 0
            left, right = socket.socketpair()
            left.close()
            right.close()
    finally:
        server.close()


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        (None, True),
        ("localhost", True),
        ("api.localhost", True),
        (b"127.0.0.1", True),
        ("127.8.9.1", True),
        ("::1", True),
        ("[::1]", True),
        ("10.255.255.1", False),
        ("api.openai.com", False),
        ("8.8.8.8", False),
    ],
)
def test_is_loopback(host: object, expected: bool) -> None:
    assert is_loopback(host) is expected
