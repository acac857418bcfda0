"""A refusal inside the openai SDK is reported as the harness's ``NetworkRefused``, with
advice that fits the test (recording a cassette, or replay/fake/allow).

Nothing here can leave the machine: the inner session's conftest installs a recorder
*below* the guard (on the real socket functions, before the plugin patches them) that
refuses and logs any non-loopback resolution or connection, and the hosts are
``*.invalid``. The outer test checks the recorder never saw such an attempt.
"""

from __future__ import annotations

import json

import pytest

from harness._errors import NetworkRefused
from harness.testing._network import refusal_in

RECORDER = """
import json, socket

SEEN = []
_real_connect = socket.socket.connect
_real_getaddrinfo = socket.getaddrinfo
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


def connect(self, address):
    host = address[0] if isinstance(address, tuple) else address
    SEEN.append(str(host))
    if self.family in (socket.AF_INET, socket.AF_INET6) and host not in _LOOPBACK:
        raise ConnectionRefusedError(f"recorder refused {host}")
    return _real_connect(self, address)


def getaddrinfo(host, *args, **kwargs):
    SEEN.append(str(host))
    if host is not None and str(host) not in _LOOPBACK:
        raise socket.gaierror(socket.EAI_NONAME, f"recorder refused {host}")
    return _real_getaddrinfo(host, *args, **kwargs)


socket.socket.connect = connect
socket.getaddrinfo = getaddrinfo


def pytest_sessionfinish(session):
    with open("seen.json", "w") as out:
        json.dump(SEEN, out)
"""

TESTS = """
import asyncio
import openai
import pytest
from harness.testing import HarnessConfig, NetworkRefused

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def harness_config():
    return HarnessConfig(
        openai_base_url="https://api.invalid/v1", openai_api_key="sk-test-0123456789"
    )


@pytest.mark.harness_cassette
def test_marked_sync(harness_openai):
    with pytest.raises(NetworkRefused) as info:
        harness_openai.chat.completions.create(model="m", messages=MESSAGES)
    print("MARKED", info.value)


@pytest.mark.harness_cassette
def test_marked_async(harness_async_openai):
    async def go():
        async with harness_async_openai as client:
            await client.chat.completions.create(model="m", messages=MESSAGES)

    with pytest.raises(NetworkRefused) as info:
        asyncio.run(go())
    print("ASYNC", type(info.value).__name__)


def test_unmarked_own_client(harness_runner):
    client = openai.OpenAI(
        base_url="https://models.test/v1", api_key="sk-test-0123456789", max_retries=0
    )
    client.chat.completions.create(model="m", messages=MESSAGES)
"""


@pytest.fixture
def outcome(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.RunResult:
    monkeypatch.setenv("COLUMNS", "400")  # the summary line is not cut short
    pytester.makeconftest(RECORDER)
    pytester.makepyfile(test_refusal=TESTS)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-s", "-rf", "--harness-record-mode=once"
    )
    seen = json.loads((pytester.path / "seen.json").read_text())
    assert all(host in ("127.0.0.1", "::1", "localhost") for host in seen), seen
    return result


def test_refusals_are_named_and_advised_per_situation(outcome: pytest.RunResult) -> None:
    outcome.assert_outcomes(passed=2, failed=1)
    out = outcome.stdout.str()
    # with a cassette marker: the fixture clients raise NetworkRefused, advice is recording
    marked = next(line for line in out.splitlines() if "MARKED " in line)
    assert "real network access to 'api.invalid' refused in test" in marked
    assert "has a cassette marker" in marked
    assert "--harness-network=allow --harness-record-mode=once" in marked
    assert "OPENAI_BASE_URL" in marked
    assert "Replay a cassette" not in marked
    assert "ASYNC NetworkRefused" in out
    # without one (the test's own client): the failure and its summary name the refusal
    assert "harness: the network guard refused this request" in out
    summary = next(line for line in out.splitlines() if line.startswith("FAILED"))
    assert "test_unmarked_own_client - NetworkRefused: real network access to" in summary
    assert "'models.test'" in out
    assert "Replay a cassette (@pytest.mark.harness_cassette)" in out


def test_refusal_in_walks_causes_and_contexts() -> None:
    refused = NetworkRefused("h.invalid", "t", "how")
    middle = OSError("transport")
    middle.__cause__ = refused
    outer = RuntimeError("sdk")
    outer.__context__ = middle  # a context, not a cause
    assert refusal_in(outer) is refused
    assert refusal_in(refused) is refused
    assert refusal_in(ValueError("x")) is None
    loop = ValueError("a")
    loop.__context__ = loop
    assert refusal_in(loop) is None
