"""The recording example in docs/examples/recording: record with ``--record-mode=once``
(pytest-recording's names) through the ``harness_server`` fixture, a loopback server
playing the project's ``harness_model``, in one command; then replay offline."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "recording"


def _pytest(pytester: pytest.Pytester, project: Path, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--rootdir", str(project), "-c", str(project / "pytest.ini"), str(project), "-v", *args
    )


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = pytester.path / "recording"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__", "cassettes"))
    monkeypatch.chdir(folder)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return folder


@pytest.mark.slow
def test_record_in_one_command_through_the_loopback_server_then_replay_offline(
    pytester: pytest.Pytester, project: Path
) -> None:
    recorded = _pytest(pytester, project, "--record-mode=once")
    recorded.assert_outcomes(passed=1)
    cassettes = list((project / "tests" / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == 1, cassettes
    text = cassettes[0].read_text()
    assert text.count("uri: http://127.0.0.1:") == 2  # both requests went to the loopback
    assert "forecast" in text and "snow, -3 C" in text

    # the replay never reaches the server: its model now answers something else
    conftest = project / "conftest.py"
    conftest.write_text(conftest.read_text().replace("Yes: snow, -3 C.", "Sunny."))
    replayed = _pytest(pytester, project)
    replayed.assert_outcomes(passed=1)
    assert cassettes[0].read_text() == text  # replay rewrote nothing


def test_without_a_cassette_replay_only_fails_clearly(
    pytester: pytest.Pytester, project: Path
) -> None:
    result = _pytest(pytester, project, "--record-mode=none")
    result.assert_outcomes(errors=1)
    out = " ".join(result.stdout.str().split())
    assert "does not exist and record mode is 'none' (replay only)" in out


def test_the_readme_commands_are_the_ones_that_work() -> None:
    """It said ``harness serve scenario.yaml`` (serve takes ``--scenario``) in a folder
    with no scenario, and recording needed two shells."""
    readme = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    commands = readme.split("```text")[1].split("```")[0]
    assert [line.split("#")[0].strip() for line in commands.strip().splitlines()] == [
        "pytest --record-mode=once",
        "pytest",
    ]
    for mention in readme.split("harness serve")[1:]:
        assert mention.startswith(" --scenario "), mention[:40]
