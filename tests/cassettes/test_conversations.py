"""Grouping a cassette's requests into conversations, and converting all of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from harness import CassetteError
from harness.cassettes import conversations_of, scenario_data
from harness.cli._app import app

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "cassettes" / "real" / "openai"


def _interaction(messages: list[dict], answer: dict, tools: bool = True) -> dict:  # type: ignore[type-arg]
    body: dict = {"model": "gpt-test", "messages": messages}  # type: ignore[type-arg]
    if tools:
        body["tools"] = [
            {"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}
        ]
    response = {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **answer}, "finish_reason": "stop"}
        ],
    }
    return {
        "request": {
            "method": "POST",
            "uri": "https://api.openai.test/v1/chat/completions",
            "body": json.dumps(body),
            "headers": {},
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["application/json"]},
            "body": {"string": json.dumps(response)},
        },
    }


def _cassette(tmp_path: Path, interactions: list[dict]) -> Path:  # type: ignore[type-arg]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "interactions": interactions}))
    return path


USER = {"role": "user", "content": "hi"}
CALL = {
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]
}


def test_a_request_that_repeats_its_parents_history_is_told_apart_by_the_answer() -> None:
    """The MCP sampling request has the agent's history but not the agent's answer."""
    found = conversations_of(
        REAL / "chat_mcp_sampling_call_without_tools_inside_tool_loop_gzip.yaml"
    )
    assert [c.numbers for c in found] == [(1, 3), (2,)]


def test_conversations_that_cannot_be_told_apart_name_the_interactions(tmp_path: Path) -> None:
    followed = [
        USER,
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "again"},
    ]
    path = _cassette(
        tmp_path,
        [
            _interaction([USER], {"content": "hello"}),
            _interaction([USER], {"content": "hello"}),
            _interaction(followed, {"content": "bye"}),
        ],
    )
    with pytest.raises(CassetteError) as info:
        conversations_of(path)
    message = str(info.value)
    assert "the conversations cannot be told apart: interaction 3 continues 2" in message
    assert "interactions 1; interactions 2" in message
    ran = CliRunner().invoke(
        app, ["cassette", "to-scenario", str(path), "-o", str(tmp_path / "s.yaml")]
    )
    assert ran.exit_code == 2 and "cannot be told apart" in ran.output


def test_a_follow_up_turn_becomes_a_second_user_turn(tmp_path: Path) -> None:
    followed = [
        USER,
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "again"},
    ]
    path = _cassette(
        tmp_path,
        [_interaction([USER], {"content": "hello"}), _interaction(followed, {"content": "bye"})],
    )
    data = scenario_data(path)
    assert [t["messages"] for t in data["turns"]] == [
        [USER],
        [{"role": "user", "content": "again"}],
    ]
    target = tmp_path / "s.yaml"
    target.write_text(yaml.safe_dump(data))
    ran = CliRunner().invoke(app, ["run", "--json", str(target)])
    report = json.loads(ran.stdout)["scenarios"][0]
    assert (report["passed"], report["turns"], report["model_requests"]) == (True, 2, 2)


def test_your_own_tools_replay_the_recording_and_differences_are_reported(tmp_path: Path) -> None:
    source = REAL / "chat_tool_choice_schedule_forced_forced_auto.yaml"
    target = tmp_path / "bound.yaml"
    runner = CliRunner()
    wrote = runner.invoke(
        app,
        [
            "cassette",
            "to-scenario",
            str(source),
            "-o",
            str(target),
            "--tools",
            "fixtures.sessions:weather_tools()",
        ],
    )
    assert wrote.exit_code == 0, wrote.output
    data = yaml.safe_load(target.read_text())
    assert data["tools"] == ["fixtures.sessions:weather_tools()"]
    assert data["tool_choice"]["schedule"] == ["get_weather", "get_forecast", "auto"]
    ran = runner.invoke(app, ["run", "--json", str(target)])
    assert ran.exit_code == 0, ran.output
    (entry,) = json.loads(ran.stdout)["scenarios"]
    (note,) = entry["notes"]
    assert (
        note.startswith("get_forecast (call ") and "now 'Forecast for Paris: rain all week'" in note
    )
    assert "result differs: get_forecast" in runner.invoke(app, ["run", str(target)]).output


def test_strategies_need_tools(tmp_path: Path) -> None:
    ran = CliRunner().invoke(
        app,
        ["cassette", "to-scenario", str(REAL / "chat_tool_choice_schedule_forced_forced_auto.yaml"),
         "-o", str(tmp_path / "x.yaml"), "--strategies", "chaining"],
    )  # fmt: skip
    assert ran.exit_code == 2 and "--strategies goes with --tools" in ran.output


def test_a_one_turn_recording_with_your_tools_reports_a_result_that_differs(
    tmp_path: Path,
) -> None:
    """A recording of one user turn becomes a plain scenario (no ``turns``); a bound tool's
    result that differs from the recorded one is reported there too."""
    tool: dict[str, Any] = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    first, second = (
        _interaction([USER], {"tool_calls": [call]}),
        _interaction(
            [
                USER,
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "Recorded: 20C, cloudy"},
            ],
            {"content": "It is cloudy."},
        ),
    )
    for interaction in (first, second):
        body = json.loads(interaction["request"]["body"])
        forecast = {**tool, "function": {**tool["function"], "name": "get_forecast"}}
        body["tools"] = [tool, forecast]  # what weather_tools() offers
        interaction["request"]["body"] = json.dumps(body)
    source = _cassette(tmp_path, [first, second])
    target = tmp_path / "bound.yaml"
    runner = CliRunner()
    command = ["cassette", "to-scenario", str(source), "-o", str(target)]
    wrote = runner.invoke(app, [*command, "--tools", "fixtures.sessions:weather_tools()"])
    assert wrote.exit_code == 0, wrote.output
    assert "turns" not in yaml.safe_load(target.read_text())  # the one-turn form
    ran = runner.invoke(app, ["run", "--json", str(target)])
    assert ran.exit_code == 0, ran.output
    (note,) = json.loads(ran.stdout)["scenarios"][0]["notes"]
    assert note.startswith("get_weather (call c1, request 1): recorded 'Recorded: 20C, cloudy'")
    assert "now 'Current weather in Paris: 72°F, sunny'" in note
    assert "result differs: get_weather" in runner.invoke(app, ["run", str(target)]).output


# -- what a client writes between requests -----------------------------------------------

SYSTEM_A = {"role": "system", "content": "You are the triage agent."}
SYSTEM_B = {"role": "system", "content": "You are the refunds agent."}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "done"}


def test_a_new_system_prompt_over_the_same_history_is_a_handoff_in_one_conversation(
    tmp_path: Path,
) -> None:
    path = _cassette(
        tmp_path,
        [
            _interaction([SYSTEM_A, USER], CALL),
            _interaction(
                [SYSTEM_B, USER, {"role": "assistant", **CALL}, RESULT],
                {"content": "ok"},
                tools=False,
            ),
        ],
    )
    (conversation,) = conversations_of(path)
    gap = conversation.gap(0)
    assert [(type(m).__name__, m.content) for m in gap.written] == [
        ("SystemMessage", "You are the refunds agent.")
    ]
    assert [r.tool_call_id for r in gap.results] == ["c1"] and not gap.users
    target = tmp_path / "s.yaml"
    target.write_text(yaml.safe_dump(scenario_data(path), sort_keys=False))
    ran = CliRunner().invoke(app, ["run", str(target)])
    assert ran.exit_code == 0, ran.output


def test_the_same_system_prompt_is_stronger_evidence_than_a_longer_prefix(tmp_path: Path) -> None:
    """Two conversations qualify for the third request: the one with its system prompt
    wins, though the other's history is as long."""
    path = _cassette(
        tmp_path,
        [
            _interaction([SYSTEM_A, USER], {"content": "hello"}),
            _interaction([SYSTEM_B, USER], {"content": "hello"}),
            _interaction(
                [SYSTEM_B, USER, {"role": "assistant", "content": "hello"}, USER],
                {"content": "bye"},
            ),
        ],
    )
    assert [c.numbers for c in conversations_of(path)] == [(1,), (2, 3)]


def test_messages_a_client_writes_are_told_apart_from_users_and_additions(tmp_path: Path) -> None:
    path = _cassette(
        tmp_path,
        [
            _interaction([USER], CALL),
            _interaction(
                [
                    USER,
                    {"role": "assistant", **CALL},
                    RESULT,
                    {"role": "user", "content": "nudge"},
                    {"role": "assistant", "content": "I write this myself."},
                    {"role": "user", "content": "after it"},
                ],
                {"content": "ok"},
            ),
        ],
    )
    gap = conversations_of(path)[0].gap(0)
    assert [u.content for u in gap.users] == ["nudge"]
    assert [(m.role, m.content) for m in gap.written] == [
        ("assistant", "I write this myself."),
        ("user", "after it"),
    ]
    assert gap.added == ()


def test_a_client_that_sent_back_no_answer_is_refused_naming_the_nearest_scenario(
    tmp_path: Path,
) -> None:
    path = _cassette(
        tmp_path,
        [
            _interaction([USER], {"content": "hello"}),
            _interaction([USER, {"role": "user", "content": "again"}], {"content": "bye"}),
        ],
    )
    with pytest.raises(CassetteError, match=r"interaction 2 cannot be replayed") as info:
        scenario_data(path)
    assert "sent no answer of the model back" in str(info.value)
    assert "new conversation" in str(info.value)
