"""Scenario files register typed context objects with ``context_objects:``."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import ChatContext, ScenarioError
from harness.scenarios import load_scenario, run_scenario

BASE = """
name: chat
prompt: Tell the team.
tools: [fixtures.chat:chat_tools()]
model:
  steps:
    - {call: send_message, args: {text: hello}}
    - {reply: done}
expect:
  output: done
  user_outputs: [hello]
  invariants: true
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenarios" / "s.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_both_entry_forms_build_fresh_objects(tmp_path: Path) -> None:
    text = BASE + (
        "context_objects:\n"
        "  - fixtures.chat:outbox()\n"
        '  - {"harness:ChatContext": {channel: web, chat_id: W-chat-123456}}\n'
    )
    scenario = load_scenario(write(tmp_path, text))
    first, second = scenario.build_context_objects(), scenario.build_context_objects()
    assert [type(o).__name__ for o in first] == ["Outbox", "ChatContext"]
    assert first[0] is not second[0]  # factories run again for each build
    assert first[1] == ChatContext(channel="web", chat_id="W-chat-123456")
    assert scenario.build_options().context_objects  # reach the run's options
    outcome = run_scenario(scenario)
    assert outcome.passed, outcome.problem


def test_without_the_chat_the_model_reads_the_missing_context_error(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, BASE + "context_objects: [fixtures.chat:outbox()]\n"))
    outcome = run_scenario(scenario)
    assert not outcome.passed
    assert "expected user outputs ['hello'], got []" in str(outcome.problem)


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ("[fixtures.chat:outbox(), fixtures.chat:outbox()]", "bad context_objects: .*both Outbox"),
        (
            '[{"harness:ChatContext": {channel: web}}]',
            "context object factory 'harness:ChatContext' refused .*chat_id",
        ),
        ('[{"a:b": {}, "c:d": {}}]', "a context object entry must be"),
        ("[fixtures.chat:nothing_here]", "has no attribute 'nothing_here'"),
    ],
)
def test_bad_entries_are_scenario_errors(tmp_path: Path, entries: str, message: str) -> None:
    scenario = load_scenario(write(tmp_path, BASE + f"context_objects: {entries}\n"))
    with pytest.raises(ScenarioError, match=message):
        scenario.build_options()
