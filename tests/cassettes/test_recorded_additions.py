"""Facts of the real recordings that exercise what a client writes between requests: tools
added mid-conversation (Anthropic ``tool_addition``, Responses ``additional_tools``), a
hosted search over a namespace, a client-written assistant message (crewAI) and a handoff
(the OpenAI Agents SDK): how they group into conversations, what ``show`` and ``show
--json`` say, and what the converted scenario replays. Every recording is also iterated by
``test_corpus_cassettes.py``; this file names the ones it pins facts of."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from corpus import REAL
from typer.testing import CliRunner

from harness.cassettes import conversations_of, scenario_data
from harness.cassettes._show import show_cassette, show_data
from harness.cli._app import app
from harness.messages import AssistantMessage, SystemMessage
from harness.scenarios import load_scenario, run_scenario


def _path(name: str) -> Path:
    found = sorted(REAL.rglob(name))
    if not found:
        pytest.skip(f"{name} is not in cassettes/real")
    return found[0]


def _replays(path: Path, tmp_path: Path) -> object:
    target = tmp_path / "converted.yaml"
    target.write_text(yaml.safe_dump(scenario_data(path), sort_keys=False))
    outcome = run_scenario(load_scenario(target))
    assert outcome.passed, outcome.problem
    return outcome


def test_an_anthropic_tool_addition_after_a_result_is_an_injection_by_addition(
    tmp_path: Path,
) -> None:
    path = _path("messages_tool_addition_after_capability_result_pydantic_ai.yaml")
    (conversation,) = conversations_of(path)
    gap = conversation.gap(0)
    assert [t.name for t in gap.added] == ["lookup_refund_policy"] and not gap.written
    assert "  injected: lookup_refund_policy (addition)" in show_cassette(path)
    first, second, _ = show_data(path)["conversations"][0]["requests"]
    assert first["changes"] == [
        {"added": ["lookup_refund_policy"], "removed": [], "via": "addition"}
    ]
    assert second["tools"]["added"] == ["lookup_refund_policy"]
    outcome = _replays(path, tmp_path)
    trace = outcome.trace  # type: ignore[attr-defined]
    assert [(c.added, c.via) for c in trace.iterations[0].changes] == [
        (("lookup_refund_policy",), "addition")
    ]


def test_an_addition_after_a_text_answer_with_no_user_message_continues_the_turn(
    tmp_path: Path,
) -> None:
    path = _path("responses_additional_tools_after_text_answer_pydantic_ai.yaml")
    data = scenario_data(path)
    assert data["continuation"] == {"continue_after": [1]}
    outcome = _replays(path, tmp_path)
    rows = outcome.rows  # type: ignore[attr-defined]
    assert rows[0].continued and rows[1].added == ("lookup_refund_policy",)


def test_a_hosted_search_over_a_namespace_reveals_the_namespace_functions(tmp_path: Path) -> None:
    path = _path("responses_hosted_search_over_namespace_pydantic_ai.yaml")
    (request,) = show_data(path)["conversations"][0]["requests"]
    assert request["response"]["discovered"] == [
        "get_exchange_rate",
        "stock_lookup",
        "mortgage_calculator",
    ]
    assert request["tools"]["namespaces"] == {
        "tools": ["get_weather", "get_exchange_rate", "stock_lookup", "mortgage_calculator"]
    }
    _replays(path, tmp_path)


def test_a_handoff_stays_one_conversation_with_new_instructions_and_no_tools(
    tmp_path: Path,
) -> None:
    path = _path("responses_agents_sdk_handoff_new_instructions_tools_withdrawn_langsmith.yaml")
    (conversation,) = conversations_of(path)
    (written,) = conversation.gap(0).written
    assert isinstance(written, SystemMessage) and written.content.startswith("You are a math")
    assert conversation.requests[1].tools == ()
    lines = show_cassette(path)
    assert any(
        line.startswith("  the client changed the system prompt: You are a math") for line in lines
    )
    assert show_data(path)["conversations"][0]["requests"][1]["written"] == ["system"]
    outcome = _replays(path, tmp_path)
    assert outcome.model_requests == 2  # type: ignore[attr-defined]
    trace = outcome.trace  # type: ignore[attr-defined]
    assert trace.iterations[0].removed == ("transfer_to_handoff_agent",)


def test_a_client_written_assistant_message_is_written_again_by_the_replay(tmp_path: Path) -> None:
    path = _path(
        "openai/chat_crewai_client_writes_assistant_final_answer_prompt_withdraws_tools.yaml"
    )
    (conversation,) = conversations_of(path)
    (written,) = conversation.gap(0).written
    assert isinstance(written, AssistantMessage) and "final answer" in (written.content or "")
    strategy = scenario_data(path)["strategies"][0]["harness.cassettes:RecordedTools"]
    assert strategy["writes"][1] == [{"role": "assistant", "content": written.content}]
    outcome = _replays(path, tmp_path)
    assert outcome.trace.iterations[1].offered == ()  # type: ignore[attr-defined]


def test_to_scenario_counts_recorded_requests_apart_from_the_replies_it_adds(
    tmp_path: Path,
) -> None:
    path = _path("responses_additional_tools_no_declared_tools_pydantic_ai.yaml")
    target = tmp_path / "one.yaml"
    wrote = CliRunner().invoke(app, ["cassette", "to-scenario", str(path), "-o", str(target)])
    assert wrote.exit_code == 0, wrote.output
    assert "1 recorded request(s), 1 final reply added" in wrote.output
    ran = CliRunner().invoke(app, ["run", str(target)])
    assert ran.exit_code == 0, ran.output
