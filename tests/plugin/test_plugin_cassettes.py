"""Cassettes: record against a loopback fake, secrets scrubbed, replay offline, hooks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from harness.models import ScriptedModel, WireServer, reply
from harness.testing import (
    SECRET_HEADERS,
    Scrubber,
    cassette_path,
    open_cassette,
    scrub_request,
    scrub_response,
)

SECRETS = ("sk-secret-123", "org-secret-456", "proj-secret-789", "cookie-secret-000")

INNER = """
import asyncio
import os
import pytest
from harness.testing import HarnessConfig

@pytest.fixture
def harness_config():
    return HarnessConfig(
        openai_base_url=os.environ.get("FAKE_URL", "http://127.0.0.1:9/v1"),
        openai_api_key="sk-secret-123",
        match_on=["method", "path"],
    )

HEADERS = {
    "OpenAI-Organization": "org-secret-456",
    "OpenAI-Project": "proj-secret-789",
    "Cookie": "session=cookie-secret-000",
    "X-Api-Key": "sk-secret-123",
}

@pytest.mark.harness_cassette
def test_chat(harness_openai, harness_cassette):
    response = harness_openai.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "hi"}], extra_headers=HEADERS
    )
    assert response.choices[0].message.content == "hello from the fake"
    print("PLAYED", harness_cassette.play_count)

@pytest.mark.harness_cassette(name="shared")
def test_async(harness_async_openai):
    async def ask():
        response = await harness_async_openai.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "again"}]
        )
        return response.choices[0].message.content
    assert asyncio.run(ask()) == "hello again"
"""


@pytest.fixture
def server() -> Iterator[WireServer]:
    model = ScriptedModel([reply("hello from the fake"), reply("hello again")])
    with WireServer(model) as running:
        yield running


@pytest.mark.slow
def test_record_then_replay_offline(
    pytester: pytest.Pytester, server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_rec=INNER)
    monkeypatch.setenv("FAKE_URL", server.url)
    # In a subprocess: the server's threads stay out of the inner session's process.
    recorded = pytester.runpytest_subprocess(
        "-s", "-p", "no:cacheprovider", "--harness-record-mode=once"
    )
    recorded.assert_outcomes(passed=2)
    assert "PLAYED 0" in recorded.stdout.str()  # recorded, not replayed
    assert len(server.requests) == 2

    chat = pytester.path / "cassettes" / "test_rec" / "test_chat.yaml"
    shared = pytester.path / "cassettes" / "test_rec" / "shared.yaml"
    assert chat.is_file() and shared.is_file()
    text = chat.read_text()
    assert "hello from the fake" in text
    for secret in SECRETS:
        assert secret not in text
    lowered = text.lower()
    for header in (
        "authorization:",
        "openai-organization:",
        "openai-project:",
        "cookie:",
        "x-api-key:",
    ):
        assert header not in lowered
    assert not list(chat.parent.glob("*.tmp"))  # atomic writes leave no temp files

    # Replay with no server at all (the URL points at a closed loopback port).
    monkeypatch.delenv("FAKE_URL")
    replayed = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    replayed.assert_outcomes(passed=2)
    assert "PLAYED 1" in replayed.stdout.str()
    assert len(server.requests) == 2


def test_missing_cassette_in_replay_mode_says_how_to_record(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_rec=INNER)
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "test_chat")
    result.assert_outcomes(errors=1, deselected=1)
    result.stdout.fnmatch_lines(
        ["*cassettes/test_rec/test_chat.yaml' does not exist and record mode is 'none'*"]
    )
    out = result.stdout.str()
    assert "--harness-record-mode=once" in out
    # the advice alone: no plugin-internal traceback before it, no chained copy after it
    report = out.split("ERROR at setup of test_chat", 1)[1].split("short test summary", 1)[0]
    lines = [line for line in report.splitlines() if line.strip("_= ")]
    assert len(lines) == 1 and lines[0].startswith("cassette '"), report
    assert "pytest_plugin.py" not in out and "_cassette.py" not in out
    assert "During handling" not in out


def test_hooks_add_matchers_and_scrubbers(
    pytester: pytest.Pytester, server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeconftest(
        """
        from harness.testing import Scrubber

        def pytest_harness_cassette_matchers(config):
            return {"anything": lambda r1, r2: None}

        def _drop_body(request):
            request.body = request.body.replace(b"top secret", b"[redacted]")
            return request

        def _tag(response):
            response["headers"]["x-scrubbed"] = ["yes"]
            return response

        def pytest_harness_cassette_scrubbers(config):
            return [Scrubber(request=_drop_body, response=_tag)]
        """
    )
    pytester.makepyfile(
        """
        import os
        import pytest
        from harness.testing import HarnessConfig

        @pytest.fixture
        def harness_config():
            return HarnessConfig(openai_base_url=os.environ.get("FAKE_URL", "http://127.0.0.1:9/v1"))

        @pytest.mark.harness_cassette(match_on=["anything"])
        def test_chat(harness_openai):
            response = harness_openai.chat.completions.create(
                model="gpt-test", messages=[{"role": "user", "content": "top secret"}]
            )
            assert response.choices[0].message.content == "hello from the fake"

        @pytest.mark.harness_cassette(match_on=["no_such_matcher"])
        def test_bad_matcher(harness_cassette):
            pass
        """
    )
    monkeypatch.setenv("FAKE_URL", server.url)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--harness-record-mode=all")
    result.assert_outcomes(passed=1, errors=1)
    assert "unknown cassette matcher(s) ['no_such_matcher']" in result.stdout.str()
    text = next((pytester.path / "cassettes").rglob("test_chat.yaml")).read_text()
    assert "top secret" not in text and "[redacted]" in text
    assert "x-scrubbed" in text
    monkeypatch.delenv("FAKE_URL")
    pytester.runpytest("-p", "no:cacheprovider", "-k", "test_chat").assert_outcomes(
        passed=1, deselected=1
    )


def test_scrubbers_remove_every_secret_header() -> None:
    class Request:
        def __init__(self) -> None:
            self.headers = {h.title(): "secret" for h in SECRET_HEADERS} | {"Accept": "json"}

    request = scrub_request(Request())
    assert request.headers == {"Accept": "json"}
    response = scrub_response(
        {"headers": {"Set-Cookie": ["a=b"], "content-type": ["json"]}, "body": {}}
    )
    assert response["headers"] == {"content-type": ["json"]}
    assert scrub_response({"status": 200}) == {"status": 200}
    assert Scrubber().request is None


def test_cassette_paths_are_per_module_and_safe(tmp_path: Path) -> None:
    module = tmp_path / "tests" / "test_agent.py"
    assert cassette_path(tmp_path, module, "test_x") == tmp_path / "test_agent" / "test_x.yaml"
    assert cassette_path(tmp_path, module, "test_x[a/b c]").name == "test_x[a%2Fb%20c].yaml"
    assert cassette_path(tmp_path, module, "named.yaml").name == "named.yaml"
    assert cassette_path(tmp_path, module, "///").name == "%2F%2F%2F.yaml"


def test_open_cassette_in_process_records_scrubbed_and_atomically(tmp_path: Path) -> None:
    import httpx2

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json={"ok": True}, headers={"Set-Cookie": "s=cookie-secret"})

    def drop_pings(request: object) -> object:
        return None if str(getattr(request, "path", "")).endswith("/ping") else request

    path = tmp_path / "mod" / "case.yaml"
    with open_cassette(
        path, record_mode="once", scrubbers=[Scrubber(request=drop_pings)]
    ) as cassette:
        with httpx2.Client(transport=httpx2.MockTransport(handler)) as client:
            headers = {"Authorization": "Bearer sk-secret-123", "Api-Key": "sk-secret-123"}
            assert client.post("https://api.example/v1/x", headers=headers).json() == {"ok": True}
            client.get("https://api.example/v1/ping")
        assert cassette.play_count == 0
    text = path.read_text()
    assert "sk-secret-123" not in text and "cookie-secret" not in text
    assert "/v1/x" in text and "/v1/ping" not in text
    assert [p.name for p in path.parent.iterdir()] == ["case.yaml"]


def test_atomic_persister_cleans_up_on_failure(tmp_path: Path) -> None:
    from vcr.serializers import yamlserializer  # type: ignore[import-untyped]

    from harness.testing._cassette import _persister
    from harness.testing._scrub import CassetteScrubber

    target = tmp_path / "taken.yaml"
    target.mkdir()  # os.replace onto a directory fails
    persister = _persister(target, CassetteScrubber.build(), None)
    with pytest.raises(OSError, match="directory"):
        persister.save_cassette(target, {"requests": [], "responses": []}, yamlserializer)
    assert [p.name for p in tmp_path.iterdir()] == ["taken.yaml"]


@settings(max_examples=300, deadline=None)
@given(a=st.text(max_size=300), b=st.text(max_size=300))
def test_cassette_names_are_injective_and_short_enough(a: str, b: str) -> None:
    from harness.testing._config import cassette_file_name

    first, second = cassette_file_name(a + "x"), cassette_file_name(b + "x")
    assert (first == second) == (a == b)
    for name in (first, second):
        assert len(name.encode("utf-8")) <= 200 and "/" not in name and name not in (".", "..")


def test_names_that_used_to_collide_get_their_own_files(tmp_path: Path) -> None:
    module = tmp_path / "test_m.py"
    names = ["a/b", "a_b", "a b", "a\\b", "a:b", ".", "..", "", "a" * 300, "a" * 301]
    paths = {cassette_path(tmp_path, module, n) for n in names}
    assert len(paths) == len(names)
    long = cassette_path(tmp_path, module, "t" * 300)
    long.parent.mkdir(parents=True, exist_ok=True)
    long.write_text("interactions: []\n")  # no "File name too long"
    assert long.read_text() == "interactions: []\n"
