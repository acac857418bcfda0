"""``harness fuzz --agent MODULE:FACTORY --wire ...``: an agent on any framework fuzzed
through the wire; the written file replays with ``harness run`` (exit 1); a broken wire
factory or an agent calling another wire format exits 2 saying what to fix; ``--database``
replays the failing script first next time."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner, Result

from harness.cli._app import app

runner = CliRunner()

AGENT = textwrap.dedent(
    """
    import json, uuid
    from openai import OpenAI

    TOOLS = [
        {"type": "function", "function": {"name": "list_notes", "description": "The notes.",
         "parameters": {"type": "object", "properties": {}}}},
        {"type": "function", "function": {"name": "delete_note", "description": "Delete one.",
         "parameters": {"type": "object", "properties": {"note_id": {"type": "string"}},
                        "required": ["note_id"]}}},
    ]

    def make(base_url, api_key):
        client = OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
        notes = {f"n-{uuid.uuid4().hex[:6]}": pinned for pinned in (False, True)}
        deleted = []

        def call(name, args):
            if name == "list_notes":
                return [{"note_id": n, "pinned": p} for n, p in notes.items()]
            deleted.append(notes.pop(args["note_id"]))
            return "deleted"

        def run(prompt):
            with client:
                messages = [{"role": "user", "content": prompt}]
                for _ in range(8):
                    message = client.chat.completions.create(
                        model="gpt-4o-mini", messages=messages, tools=TOOLS
                    ).choices[0].message
                    if not message.tool_calls:
                        return message.content
                    messages.append(message.model_dump(exclude_none=True))
                    for c in message.tool_calls:
                        try:
                            args = json.loads(c.function.arguments)
                            out = json.dumps(call(c.function.name, args))
                        except (KeyError, ValueError) as exc:
                            out = f"error: {exc}"
                        messages.append({"role": "tool", "tool_call_id": c.id, "content": out})

        return {"run": run, "prompt": "Tidy up.", "state": deleted}

    def pinned_stay(run):
        assert True not in run.state, "a pinned note was deleted"

    def lonely(base_url):
        return {"run": print, "prompt": "hi"}

    def promptless(base_url, api_key):
        return {"run": print}

    def not_runnable(base_url, api_key):
        return {"run": 42, "prompt": "hi"}

    def silent(base_url, api_key):
        return {"run": lambda prompt: "no model needed", "prompt": "hi"}
    """
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "my_wire_mod.py").write_text(AGENT, encoding="utf-8")
    monkeypatch.chdir(folder)
    monkeypatch.setattr("sys.path", [p for p in __import__("sys").path if p not in ("", ".")])
    return folder


def _fuzz(*args: str) -> Result:
    return runner.invoke(app, ["fuzz", *args])


BUG = ("--agent", "my_wire_mod:make", "--property", "my_wire_mod:pinned_stay", "-n", "200")


def test_a_bug_found_through_the_wire_exits_1_and_its_file_replays(project: Path) -> None:
    result = _fuzz(*BUG, "--wire", "openai-chat", "--seed", "1", "-o", "out", "--json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["found"] and data["property"] == "my_wire_mod:pinned_stay"
    scenario = yaml.safe_load(Path(data["counterexample"]).read_text(encoding="utf-8"))
    assert scenario["agent"] == "my_wire_mod:make" and scenario["wire"] == "openai-chat"
    replay = runner.invoke(app, ["run", data["counterexample"]])
    assert replay.exit_code == 1, replay.output
    assert "a pinned note was deleted" in replay.output


def test_the_database_replays_the_failing_script_first(project: Path) -> None:
    first = _fuzz(*BUG, "--wire", "openai-chat", "--seed", "1", "--database", "db", "--json")
    assert first.exit_code == 1 and Path("db").is_dir()
    one = ("-a", "my_wire_mod:make", "-p", "my_wire_mod:pinned_stay", "-n", "1", "--seed", "7")
    without = _fuzz(*one, "--wire", "openai-chat", "--json")
    assert without.exit_code == 0, without.output  # one drawn example misses the bug
    again = _fuzz(*one, "--wire", "openai-chat", "--database", "db", "--json")
    assert again.exit_code == 1, again.output  # the saved script, replayed first
    assert json.loads(again.stdout)["property"] == "my_wire_mod:pinned_stay"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-a", "my_wire_mod:lonely", "--wire", "openai-chat"], "factory(base_url, api_key)"),
        (["-a", "my_wire_mod:promptless", "--wire", "anthropic"], "must return a 'prompt'"),
        (["-a", "my_wire_mod:not_runnable", "--wire", "openai-chat"], "must return 'run'"),
        (["-a", "my_wire_mod:silent", "--wire", "openai-chat"], "never called the openai-chat"),
        (
            ["-a", "my_wire_mod:make", "--wire", "openai-responses"],
            "the agent called openai-chat (POST /v1/chat/completions), but the wire is "
            "openai-responses: fuzz it with --wire openai-chat",
        ),
        (["-a", "my_wire_mod:make", "--wire", "gemini"], "wire"),
    ],
)
def test_bad_wire_input_exits_2_saying_what_to_fix(
    project: Path, args: list[str], message: str
) -> None:
    result = _fuzz(*args, "-n", "5")
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
