"""The recording example in docs/examples/recording: record against a loopback
OpenAI-compatible server named by ``OPENAI_BASE_URL`` with ``--record-mode=once``
(pytest-recording's names), then replay offline with ``--record-mode=none``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.models import ScriptedModel, WireServer, call, reply

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "recording"
KEY = "sk-downstream-recording-0123456789"


def _pytest(pytester: pytest.Pytester, project: Path, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--rootdir", str(project), "-c", str(project / "pytest.ini"), str(project), "-v", *args
    )


@pytest.mark.slow
def test_record_against_a_served_model_then_replay_offline(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = pytester.path / "recording"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", "cassettes"))
    monkeypatch.chdir(project)
    script = ScriptedModel([call("forecast", city="Oslo"), reply("Yes: snow, -3 C.")])
    with WireServer(script) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        recorded = _pytest(pytester, project, "--record-mode=once")
    recorded.assert_outcomes(passed=1)
    cassettes = list((project / "tests" / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == 1, cassettes
    text = cassettes[0].read_text()
    assert "forecast" in text and KEY not in text
    assert len(script.requests) == 2  # the agent really talked to the server

    # offline: the server is gone and the base URL names a host that does not exist
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.invalid/v1")
    replayed = _pytest(pytester, project, "--record-mode=none")
    replayed.assert_outcomes(passed=1)
    assert cassettes[0].read_text() == text  # replay rewrote nothing


def test_without_a_cassette_replay_only_fails_clearly(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = pytester.path / "recording"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", "cassettes"))
    monkeypatch.chdir(project)
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.invalid/v1")
    result = _pytest(pytester, project, "--record-mode=none")
    result.assert_outcomes(errors=1)
    out = " ".join(result.stdout.str().split())
    assert "does not exist and record mode is 'none' (replay only)" in out
