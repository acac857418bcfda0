"""Anthropic Messages cassettes: recorded over loopback from the wire fake through the real
``anthropic`` SDK, replayed with the server gone under the semantic matcher, played into the
loop by ``CassetteModel``, and read back as a wire trace, exactly like the OpenAI formats.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import pytest
import yaml

from fixtures.customers import search_customer
from harness import EntityDiscovery, run
from harness.assertions import expect_timeline
from harness.cassettes import (
    CassetteMismatch,
    CassetteModel,
    body_differences,
    codec_for,
    load_cassette,
    scenario_data,
    trace_from_cassette,
    trace_from_wire,
)
from harness.cassettes._show import show_cassette
from harness.models import (
    AnthropicModel,
    OpenAIWireTransport,
    ScriptedModel,
    WireServer,
    call,
    fake_anthropic_client,
    reply,
)
from harness.scenarios import load_scenario, run_scenario
from harness.testing import open_cassette

PROMPT = "What's John Smith's average spend?"
SYSTEM = "You are a CRM assistant."
CALLS = ["search_customer", "customer_c123_get_average_spend"]
FLOW = [
    "call search_customer",
    "offered gains customer_c123_get_average_spend",
    "call customer_c123_get_average_spend",
    "answer",
]


def _script() -> ScriptedModel:
    return ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            call("customer_*_get_average_spend"),
            reply("About 42."),
        ]
    )


def _run(client: anthropic.Anthropic, *, prompt: str = PROMPT, strategies=None, **kw: Any):  # type: ignore[no-untyped-def]
    return run(
        AnthropicModel(client, "claude-test", **kw),
        prompt,
        system=SYSTEM,
        tools=[search_customer],
        strategies=strategies if strategies is not None else [EntityDiscovery()],
    )


def _replay_client() -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url="http://127.0.0.1:9", api_key="sk-ant-replay", max_retries=0
    )


@pytest.fixture(scope="module", params=[False, True], ids=["json", "stream"])
def recorded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("anthropic") / f"discovery_{request.param}.yaml"
    with (
        WireServer(_script()) as server,
        open_cassette(path, record_mode="once"),
        anthropic.Anthropic(
            base_url=server.url.removesuffix("/v1"), api_key="sk-ant-live-secret", max_retries=0
        ) as client,
    ):
        result = _run(client, stream=request.param)
    assert result.output == "About 42."
    return path


def test_the_recording_is_read_by_the_anthropic_codec(recorded: Path) -> None:
    cassette = load_cassette(recorded)
    assert [i.path for i in cassette.interactions] == ["/v1/messages"] * 3
    assert {codec_for(i.method, i.path).name for i in cassette.interactions} == {  # type: ignore[union-attr]
        "anthropic-messages"
    }
    assert "sk-ant-live-secret" not in recorded.read_text()


def test_the_same_conversation_replays_through_the_sdk(recorded: Path) -> None:
    stream = "True" in recorded.stem
    with open_cassette(recorded, record_mode="none", unused="error"), _replay_client() as client:
        result = _run(client, stream=stream)
    assert result.output == "About 42."
    assert [c.name for c in result.trace.calls] == CALLS


def test_volatile_fields_and_block_forms_are_ignored(recorded: Path, tmp_path: Path) -> None:
    """metadata, cache_control, the system prompt as blocks and key order mean nothing."""
    data = yaml.safe_load(recorded.read_text())
    for item in data["interactions"]:
        body = json.loads(item["request"]["body"])
        body = dict(reversed(list(body.items())))
        body["metadata"] = {"user_id": "someone"}
        body["system"] = [
            {"type": "text", "text": body["system"], "cache_control": {"type": "ephemeral"}}
        ]
        for tool in body["tools"]:
            tool["cache_control"] = {"type": "ephemeral"}
        first = body["messages"][0]
        first["content"] = [{"type": "text", "text": first["content"]}]
        item["request"]["body"] = json.dumps(body, indent=2)
    changed = tmp_path / "volatile.yaml"
    changed.write_text(yaml.safe_dump(data))
    stream = "True" in recorded.stem
    with open_cassette(changed, record_mode="none", unused="error"), _replay_client() as client:
        assert _run(client, stream=stream).output == "About 42."


def test_another_prompt_is_a_mismatch_naming_the_message(recorded: Path) -> None:
    with (
        pytest.raises(CassetteMismatch) as info,
        open_cassette(recorded, record_mode="none", unused="ignore"),
        _replay_client() as client,
    ):
        _run(client, prompt="What's Jane Doe's average spend?", stream="True" in recorded.stem)
    message = str(info.value)
    assert "request 1" in message
    assert "message 1 differs" in message
    assert "Jane Doe" in message


def test_an_injection_regression_names_the_tools(recorded: Path) -> None:
    with (
        pytest.raises(CassetteMismatch) as info,
        open_cassette(recorded, record_mode="none", unused="ignore"),
        _replay_client() as client,
    ):
        _run(client, strategies=[], stream="True" in recorded.stem)
    message = str(info.value)
    assert "request 2" in message
    assert "offered tools differ: -customer_c123_get_average_spend" in message


def test_strict_also_compares_other_fields(recorded: Path) -> None:
    with (
        pytest.raises(CassetteMismatch, match="field 'temperature' differs"),
        open_cassette(recorded, record_mode="none", match_on=["strict"], unused="ignore"),
        _replay_client() as client,
    ):
        _run(client, defaults={"temperature": 0.5}, stream="True" in recorded.stem)


def test_the_cassette_model_drives_the_loop_in_process(recorded: Path) -> None:
    model = CassetteModel(recorded)
    assert model.system == SYSTEM and model.prompt == PROMPT
    result = run(
        model, PROMPT, system=SYSTEM, tools=[search_customer], strategies=[EntityDiscovery()]
    )
    assert result.output == "About 42."
    assert [c.name for c in result.trace.calls] == CALLS
    assert model.position == 3
    assert expect_timeline(result.trace, FLOW).passed


def test_the_cassette_model_reports_an_injection_regression(recorded: Path) -> None:
    with pytest.raises(CassetteMismatch, match=r"injection regression.*get_average_spend"):
        run(CassetteModel(recorded), PROMPT, system=SYSTEM, tools=[search_customer])


def test_trace_show_and_scenario_of_the_recording(recorded: Path, tmp_path: Path) -> None:
    trace = trace_from_cassette(recorded)
    assert [c.name for c in trace.calls] == CALLS
    assert expect_timeline(trace, FLOW).passed
    text = "\n".join(show_cassette(recorded))
    assert "call search_customer(" in text and "/v1/messages" in text
    target = tmp_path / "converted.yaml"
    target.write_text(yaml.safe_dump(scenario_data(recorded), sort_keys=False))
    outcome = run_scenario(load_scenario(target))
    assert outcome.passed, outcome.problem
    assert outcome.trace is not None
    assert [c.name for c in outcome.trace.calls] == CALLS


# -- the wire trace over the Anthropic wire fake, through the real SDK -------------------


def test_trace_from_wire_reads_anthropic_traffic() -> None:
    transport = OpenAIWireTransport(_script())
    result = _run(fake_anthropic_client(transport))
    trace = trace_from_wire(transport)
    assert [c.name for c in trace.calls] == CALLS
    assert [it.offered for it in trace] == [it.offered for it in result.trace]
    assert trace.iterations[-1].answer == "About 42."
    assert expect_timeline(trace, FLOW).passed


def test_trace_from_wire_reads_the_beta_endpoint_with_a_query() -> None:
    transport = OpenAIWireTransport(ScriptedModel([call("search_customer", name="Ann")]))
    body = {
        "model": "claude-test",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "Find Ann"}],
        "tools": [{"name": "search_customer", "input_schema": {"type": "object"}}],
    }
    reply_ = transport.app.handle("POST", "/v1/messages?beta=true", json.dumps(body).encode())
    assert reply_.status == 200
    assert transport.app.requests[0].path.endswith("?beta=true")
    trace = trace_from_wire(transport)
    assert [c.name for c in trace.calls] == ["search_customer"]
    assert trace.iterations[0].offered == ("search_customer",)


# -- the semantic matcher on Anthropic bodies ---------------------------------------------

WEATHER = {
    "name": "get_weather",
    "description": "Weather for a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def _body(**over: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "claude-test",
        "max_tokens": 512,
        "system": "Be brief.",
        "tools": [WEATHER],
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Sunny"}],
            },
        ],
    }
    body.update(over)
    return body


def _diff(recorded: dict[str, Any], actual: dict[str, Any], mode: str = "semantic") -> list[str]:
    return body_differences("POST", "/v1/messages", recorded, actual, mode=mode)


def test_matcher_ignores_volatile_anthropic_fields() -> None:
    noisy = _body(
        metadata={"user_id": "u"},
        stream=True,
        system=[{"type": "text", "text": "Be  brief.", "cache_control": {"type": "ephemeral"}}],
        tools=[{**WEATHER, "cache_control": {"type": "ephemeral"}}],
    )
    assert _diff(_body(), noisy) == []
    assert _diff(_body(), noisy, mode="strict") == []


def test_matcher_names_the_differing_system_prompt() -> None:
    out = _diff(_body(), _body(system="Be verbose."))
    assert out == [
        'message 0 differs: recorded system: text "Be brief." | now system: text "Be verbose."'
    ]


def test_matcher_names_tool_use_arguments_and_tool_results() -> None:
    changed = _body()
    changed["messages"][1]["content"][1]["input"] = {"city": "Rome"}
    (out,) = _diff(_body(), changed)
    assert out.startswith("message 2 differs")
    assert 'call get_weather({"city": "Paris"}) id=toolu_1' in out
    assert 'call get_weather({"city": "Rome"}) id=toolu_1' in out
    result = _body()
    result["messages"][2]["content"][0]["content"] = "Rainy"
    (out,) = _diff(_body(), result)
    assert out.startswith("message 3 differs") and "result for toolu_1" in out
    assert "Rainy" in out


def test_matcher_names_tools_and_input_schemas() -> None:
    other = {**WEATHER, "input_schema": {"type": "object", "properties": {"town": {}}}}
    (out,) = _diff(_body(), _body(tools=[other]))
    assert out.startswith("schema of tool 'get_weather' differs")
    assert "town" in out
    extra = {"name": "get_time", "input_schema": {"type": "object"}}
    assert _diff(_body(), _body(tools=[WEATHER, extra])) == ["offered tools differ: +get_time"]


def test_strict_compares_the_rest_and_a_beta_query_is_the_same_endpoint() -> None:
    assert _diff(_body(), _body(max_tokens=1024), mode="strict") == [
        "field 'max_tokens' differs: recorded 512, now 1024"
    ]
    assert _diff(_body(), _body(max_tokens=1024)) == []
    codec = codec_for("POST", "/v1/messages?beta=true")
    assert codec is not None and codec.name == "anthropic-messages"
    assert codec_for("GET", "/v1/messages") is None
    assert codec_for("POST", "/v1/messages/count_tokens") is None


def test_a_body_that_is_not_a_messages_request_is_compared_as_json() -> None:
    out = _diff({"messages": "nope"}, {"messages": "other"})
    assert out and "not a anthropic-messages request" in out[0]
    assert "'messages' must be an array" in out[0]
    assert _diff({"messages": "nope"}, {"messages": "nope"}) == []
