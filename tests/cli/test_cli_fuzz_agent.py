"""``harness fuzz --agent``: exit codes, the --json contract, imports from the current folder
or --path, the replay of the written file, and clear errors for bad input."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from harness.cli._app import app

runner = CliRunner()

AGENT = textwrap.dedent(
    '''
    import uuid
    from harness import llm_tool

    def make():
        notes = {f"n-{uuid.uuid4().hex[:6]}": pinned for pinned in (False, True)}
        deleted = []

        @llm_tool
        def list_notes() -> list:
            """The notes."""
            return [{"note_id": n, "pinned": p} for n, p in notes.items()]

        @llm_tool
        def delete_note(note_id: str) -> str:
            """Delete a note."""
            deleted.append(notes.pop(note_id))
            return "deleted"

        return {"prompt": "Tidy up.", "tools": [list_notes, delete_note],
                "state": {"deleted": deleted}}

    def pinned_stay(run):
        assert True not in run.state["deleted"], "a pinned note was deleted"

    def sound():
        @llm_tool
        def ping() -> str:
            """Ping."""
            return "pong"
        return {"prompt": "Ping.", "tools": [ping]}
    '''
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with the agent module, as the current folder (not on sys.path)."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "my_agent_mod.py").write_text(AGENT, encoding="utf-8")
    monkeypatch.chdir(folder)
    monkeypatch.setattr("sys.path", [p for p in __import__("sys").path if p not in ("", ".")])
    return folder


def _fuzz(*args: str) -> Result:
    return runner.invoke(app, ["fuzz", *args])


def test_a_bug_exits_1_with_the_json_contract_and_the_file_replays(project: Path) -> None:
    result = _fuzz(
        "--agent",
        "my_agent_mod:make",
        "--property",
        "my_agent_mod:pinned_stay",
        "--max-examples",
        "300",
        "--seed",
        "1",
        "--output",
        "out",
        "--json",
    )
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert list(data) == [
        "found",
        "property",
        "message",
        "examples",
        "seconds",
        "steps",
        "counterexample",
    ]
    assert data["found"] is True and data["property"] == "my_agent_mod:pinned_stay"
    assert data["message"] == "a pinned note was deleted" and data["steps"] == 3
    written = Path(data["counterexample"])
    assert written.parent == Path("out") and written.is_file()
    replay = runner.invoke(app, ["run", str(written)])
    assert replay.exit_code == 1 and "a pinned note was deleted" in replay.output


def test_nothing_found_exits_0_and_prints_the_summary_and_coverage(project: Path) -> None:
    result = _fuzz("--agent", "my_agent_mod:sound", "--max-examples", "20", "--seed", "3")
    assert result.exit_code == 0, result.output
    output = result.output
    assert "no failure in 20 runs of my_agent_mod:sound" in output
    assert "injection coverage over 20 run(s)" in output and "seed" in output


def test_found_without_json_prints_the_calls_and_the_replay_command(project: Path) -> None:
    result = _fuzz(
        "-a", "my_agent_mod:make", "-p", "my_agent_mod:pinned_stay", "-n", "300", "--seed", "1"
    )
    assert result.exit_code == 1
    output = result.output
    assert "FAIL [my_agent_mod:pinned_stay]" in output
    assert "1. list_notes()" in output and "replay: harness run fuzz-counterexamples/" in output


def test_modules_come_from_path_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "lib"
    elsewhere.mkdir()
    (elsewhere / "other_agent_mod.py").write_text(AGENT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = _fuzz(
        "--agent", "other_agent_mod:sound", "--path", str(elsewhere), "-n", "5", "--json"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["examples"] == 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "nowhere_mod:make"], "'harness fuzz --path FOLDER'"),
        (["--agent", "my_agent_mod:missing"], "has no attribute 'missing'"),
        (["--agent", "my_agent_mod"], "takes MODULE:FACTORY"),
        (["--agent", "my_agent_mod:make", "-p", "my_agent_mod:nope"], "has no attribute 'nope'"),
        (["--agent", "my_agent_mod:make", "--max-seconds", "0"], "max_seconds must be"),
        (["--agent", "my_agent_mod:make", "-u", "tools"], "--universe, --strategy and --faults"),
        (["--agent", "my_agent_mod:make", "--path", "no/such/dir"], "is not a folder"),
        (["--json"], "--property, --wire, --max-seconds and --json go with --agent"),
        (["--wire", "openai-chat"], "--property, --wire, --max-seconds and --json go with --agent"),
    ],
)
def test_usage_errors_exit_2(project: Path, args: list[str], message: str) -> None:
    result = _fuzz(*args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())


def test_an_output_that_is_a_file_exits_2(project: Path) -> None:
    Path("taken").write_text("", encoding="utf-8")
    result = _fuzz("--agent", "my_agent_mod:sound", "-n", "2", "-o", "taken")
    assert result.exit_code == 2 and "is an existing file" in result.output
