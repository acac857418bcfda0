"""Provider-native dynamic tools end to end: the local BM25 search against hand-computed
scores, the real response fixtures decoded, the providers' new 400s through the real SDKs,
``harness cassette show --json`` on every real recording, and ``ToolSearch`` giving one
trace in process and behind each SDK fake."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from harness.cassettes._show import show_data
from harness.formats import anthropic_messages, openai_responses, wire_formats
from harness.injection import ToolSearch
from harness.loop import run
from harness.models import (
    ANTHROPIC_CAPABILITIES,
    AnthropicModel,
    CapabilitiesOverride,
    OpenAIChatModel,
    OpenAIResponsesModel,
    ScriptedModel,
    fake_anthropic_client,
    fake_openai_client,
)
from harness.models._scripted._steps import call, reply, search
from harness.tools import ToolDefinition, llm_tool
from harness.tools._search import BM25Index, regex_search

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "cassettes" / "real"
FIXTURES = sorted((REAL / "responses_only").rglob("*.*"))
RECORDINGS = sorted(REAL.rglob("*.yaml"))


# -- BM25, by hand -----------------------------------------------------------------------


def test_bm25_scores_match_a_hand_computation() -> None:
    tools = [
        ToolDefinition(name="get_weather", description="Get the weather for a city"),
        ToolDefinition(name="get_time", description="Current time in a timezone"),
        ToolDefinition(name="send_email", description="Send an email"),
    ]
    # d1 = get weather get the weather for a city (8 tokens), d2 7 tokens, d3 5: avgdl 20/3
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))  # "weather" and "city": in one document
    norm = 1.5 * (1 - 0.75 + 0.75 * 8 / (20 / 3))
    expected = idf * 2 * 2.5 / (2 + norm) + idf * 1 * 2.5 / (1 + norm)
    scores = BM25Index(tools).scores("weather city")
    assert scores[0] == pytest.approx(expected, rel=1e-12) and scores[1:] == [0.0, 0.0]
    assert BM25Index(tools).search("email please") == ["send_email"]
    assert regex_search(tools, "WEATH|e-?mail") == ["get_weather", "send_email"]


# -- real response fixtures --------------------------------------------------------------


def _responses(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return [json.loads(text)]
    events = [json.loads(line) for line in text.splitlines() if line.strip()]
    groups: list[list[Any]] = []
    for event in events:
        if event.get("type") in ("message_start", "response.created"):
            groups.append([])
        groups[-1].append(event)
    return groups


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_real_response_fixtures_decode_with_their_searches(path: Path) -> None:
    if path.name.endswith(".md"):
        pytest.skip("the folder's provenance")
    fmt = anthropic_messages if path.parent.name == "anthropic" else openai_responses
    searched = calls = 0
    for body in _responses(path):
        if isinstance(body, dict) and body.get("type") == "error":
            code, message = fmt.error_details(body)
            assert code == "invalid_request_error" and "Tool reference" in (message or "")
            return
        response = fmt.response_from_events(body) if isinstance(body, list) else None
        if response is None:
            response = fmt.response_from_body(body)
        searched += len(response.message.searches)
        calls += len(response.message.tool_calls)
        for found in response.message.searches:
            if found.complete and found.tool:
                assert found.found, f"{path.name}: a finished search found nothing"
    assert searched or calls


# -- the new 400s through the real SDKs --------------------------------------------------


def _deferred(name: str = "get_weather") -> dict[str, Any]:
    return {
        "name": name,
        "description": "Weather.",
        "input_schema": {"type": "object", "properties": {}},
        "defer_loading": True,
    }


def _anthropic_400(**body: Any) -> anthropic.BadRequestError:
    client = fake_anthropic_client(ScriptedModel([reply("ok")]))
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(model="claude-test", max_tokens=10, **body)
    assert info.value.status_code == 400
    assert info.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    return info.value


def test_anthropic_refuses_every_tool_deferred() -> None:
    error = _anthropic_400(messages=[{"role": "user", "content": "hi"}], tools=[_deferred()])
    assert "defer_loading" in str(error)


def test_anthropic_refuses_a_deferred_tool_called_before_it_was_revealed() -> None:
    tools = [
        _deferred(),
        {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    ]
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sun"}],
        },
    ]
    assert "before a tool search" in str(_anthropic_400(messages=messages, tools=tools))


def test_anthropic_refuses_a_reference_to_an_unknown_tool_with_the_apis_text() -> None:
    tools = [{"name": "search", "input_schema": {"type": "object", "properties": {}}}]
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "tool_reference", "tool_name": "lookup_documents"}],
                }
            ],
        },
    ]
    error = _anthropic_400(messages=messages, tools=tools)
    assert "Tool reference 'lookup_documents' not found in available tools" in str(error)


def _openai_400(path: str, **body: Any) -> openai.BadRequestError:
    client = fake_openai_client(ScriptedModel([reply("ok")]))
    create = client.responses.create if path == "responses" else client.chat.completions.create
    with pytest.raises(openai.BadRequestError) as info:
        create(model="gpt-test", **body)
    assert info.value.status_code == 400
    assert info.value.body["type"] == "invalid_request_error"  # type: ignore[index]
    return info.value


def _function(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "function",
        "name": name,
        "parameters": {"type": "object", "properties": {}},
        **extra,
    }


def test_responses_refuses_deferred_tools_without_a_search_tool() -> None:
    error = _openai_400(
        "responses", input="hi", tools=[_function("a"), _function("b", defer_loading=True)]
    )
    assert "tool_search" in str(error)


def test_responses_refuses_a_call_in_an_unknown_namespace() -> None:
    tools = [{"type": "namespace", "name": "crm", "tools": [_function("a")]}]
    items = [
        {"role": "user", "content": "hi"},
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "a",
            "arguments": "{}",
            "namespace": "erp",
        },
        {"type": "function_call_output", "call_id": "c1", "output": "x"},
    ]
    assert "Namespace 'erp'" in str(_openai_400("responses", input=items, tools=tools))


@pytest.mark.parametrize("path", ["responses", "chat"])
def test_both_openai_apis_refuse_an_allowed_subset_naming_an_undeclared_tool(path: str) -> None:
    if path == "responses":
        choice = {
            "type": "allowed_tools",
            "mode": "auto",
            "tools": [{"type": "function", "name": "zz"}],
        }
        error = _openai_400(path, input="hi", tools=[_function("a")], tool_choice=choice)
    else:
        choice = {
            "type": "allowed_tools",
            "allowed_tools": {
                "mode": "auto",
                "tools": [{"type": "function", "function": {"name": "zz"}}],
            },
        }
        tools = [{"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}]
        error = _openai_400(
            path, messages=[{"role": "user", "content": "hi"}], tools=tools, tool_choice=choice
        )
    assert "'zz'" in str(error)


# -- show --json on every real recording --------------------------------------------------


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.name for p in RECORDINGS])
def test_show_json_has_the_documented_shape(path: Path) -> None:
    data = show_data(path)
    assert set(data) >= {"cassette", "format", "conversations"}
    for conversation in data["conversations"]:
        for request in conversation["requests"]:
            assert request["provider"] in {f.NAME for f in wire_formats()}
            assert isinstance(request["interaction"], int) and isinstance(request["stream"], bool)
            tools = request["tools"]
            assert set(tools) == {"visible", "deferred", "search", "namespaces", "added"}
            assert not set(tools["visible"]) & set(tools["deferred"])
            assert set(tools["added"]) <= set(tools["visible"])
            assert all(set(c) == {"added", "removed", "via"} for c in request["changes"])
            assert all(c["via"] in ("edit", "addition") for c in request["changes"])
            assert set(request["written"]) <= {"system", "user", "assistant", "tool"}
            choice = request["tool_choice"]
            assert choice is None or set(choice) == {"mode", "allowed", "name"}
            response = request["response"]
            assert set(response) >= {"status", "calls", "discovered", "searches", "text"}
    json.dumps(data)


def test_show_json_counts_a_hosted_search_and_hides_deferred_tools() -> None:
    path = next(p for p in RECORDINGS if "native_tool_search_namespace" in p.name)
    first = show_data(path)["conversations"][0]["requests"][0]
    assert first["tools"] == {
        "visible": ["load_capability"],
        "deferred": ["get_weather"],
        "search": ["tool_search"],
        "namespaces": {},
        "added": [],
    }
    assert first["response"]["searches"] == 1
    assert first["response"]["discovered"] == ["get_weather"]


# -- ToolSearch: one trace in process and behind each SDK fake ----------------------------


@llm_tool
def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"sunny in {city}"


@llm_tool
def send_email(to: str) -> str:
    """Send an email."""
    return "sent"


@llm_tool
def get_time() -> str:
    """Current time."""
    return "noon"


def _script() -> ScriptedModel:
    return ScriptedModel(
        [search("weather"), call("get_weather", {"city": "Paris"}), reply("Sunny.")]
    )


WAYS = {
    "in-process": lambda m: m,
    "openai-chat": lambda m: OpenAIChatModel(fake_openai_client(m), "gpt-test"),
    "openai-responses": lambda m: OpenAIResponsesModel(fake_openai_client(m), "gpt-test"),
    "anthropic": lambda m: AnthropicModel(fake_anthropic_client(m), "claude-test"),
    "anthropic-stream": lambda m: AnthropicModel(
        fake_anthropic_client(m), "claude-test", stream=True
    ),
}


def _run(way: str, native: str) -> Any:
    strategy = ToolSearch([get_weather, send_email], native=native)  # type: ignore[arg-type]
    return run(WAYS[way](_script()), "Weather in Paris?", tools=[get_time], strategies=[strategy])


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_local_search_gives_the_same_trace_every_way(way: str) -> None:
    baseline = _run("in-process", "never").trace
    result = _run(way, "never")
    assert result.output == "Sunny."
    assert result.trace.to_dict() == baseline.to_dict()
    first, second = result.trace.iterations[:2]
    assert first.deferred == ("get_weather", "send_email") and first.searches == 1
    assert first.discovered == ("get_weather",)
    assert "get_weather" not in first.offered and "get_weather" in second.offered


def test_a_scripted_run_offers_the_search_tool_a_chat_run_offers() -> None:
    """With the default ``native="auto"`` a scripted trace names the tools a trace through
    the Chat adapter names: the local ``tool_search``, not a provider's search tool."""
    scripted = _run("in-process", "auto").trace
    through_chat = _run("openai-chat", "auto").trace
    assert scripted.to_dict() == through_chat.to_dict()
    assert "tool_search" in scripted.iterations[0].offered
    assert not any(name.startswith("tool_search_tool_") for name in scripted.offered_at_start)


def test_a_scripted_model_standing_for_a_provider_plays_its_search() -> None:
    model = CapabilitiesOverride(_script(), ANTHROPIC_CAPABILITIES)
    strategy = ToolSearch([get_weather, send_email])
    result = run(model, "Weather in Paris?", tools=[get_time], strategies=[strategy])
    through_anthropic = _run("anthropic", "auto").trace
    assert result.trace.to_dict() == through_anthropic.to_dict()
    assert "tool_search_tool_bm25" in result.trace.iterations[0].offered


@pytest.mark.parametrize("way", ["anthropic", "anthropic-stream", "openai-responses"])
def test_the_providers_search_reveals_the_tool_in_the_same_turn(way: str) -> None:
    result = _run(way, "auto")
    assert result.output == "Sunny."
    first = result.trace.iterations[0]
    assert first.searches == 1 and first.discovered == ("get_weather",)
    assert [c.name for c in first.calls] == ["get_weather"]  # no call for the hosted search
    assert first.tools is not None and first.tools.search


# -- the assertion vocabulary --------------------------------------------------------------


def test_native_assertions_read_the_tool_states() -> None:
    from harness.assertions import allowed, deferred, discovered, searched

    result = _run("in-process", "never")
    assert result.trace == discovered("get_weather", at=1)
    assert result.trace == deferred("get_weather", "send_email")
    assert result.trace == searched(1)
    assert result.trace == searched(at=1)
    assert discovered("send_email").evaluate(result.trace) is not None
    assert discovered("get_weather", at=2).evaluate(result.trace) is not None
    assert deferred("get_weather", at=2).evaluate(result.trace) is not None
    failure = allowed("get_weather", at=1).evaluate(result.trace)
    assert failure is not None and "'get_weather' was not allowed" in failure.problem
    with pytest.raises(Exception, match="1-based iteration"):
        discovered("x", at=0)


# -- a client's mid-conversation addition ------------------------------------------------


def test_an_addition_is_a_system_message_with_tool_addition_blocks_and_its_beta() -> None:
    from harness.loop import ModelRequest, ModelSettings
    from harness.messages import SystemMessage, UserMessage
    from harness.models._anthropic._model import sdk_call_kwargs

    added = ToolDefinition(name="get_weather", description="Weather.")
    base = ToolDefinition(name="ask_user")
    messages = [UserMessage(content="hi"), SystemMessage(content="", tools=(added,))]
    request = ModelRequest(
        messages=messages,
        tools=(base,),
        tool_names=("ask_user",),
        settings=ModelSettings(),
        iteration=1,
    )
    body = anthropic_messages.request_body(request, model="claude-test")
    assert body["messages"][1] == {
        "role": "system",
        "content": [
            {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "get_weather"}}
        ],
    }
    assert [t["name"] for t in body["tools"]] == ["ask_user", "get_weather"]
    assert body["tools"][1]["defer_loading"] is True  # declared for the reference, deferred
    kwargs = sdk_call_kwargs(anthropic.Anthropic(api_key="sk-test").messages.create, body)
    assert kwargs["extra_headers"]["anthropic-beta"] == "mid-conversation-tool-changes-2026-07-01"
    read = anthropic_messages.request_from_body(body).request
    assert list(read.messages)[1] == messages[1].model_copy(
        update={"tools": (dataclasses.replace(added, defer_loading=True),)}
    )
    # the OpenAI Responses form: an additional_tools item
    item = openai_responses.request_body(request, model="gpt-test")["input"][1]
    assert item["type"] == "additional_tools" and item["tools"][0]["name"] == "get_weather"


def test_the_snapshot_text_shows_deferred_and_discovered_tools() -> None:
    from harness.testing import snapshot_text

    text = snapshot_text(_run("in-process", "never"))
    first, second = text.splitlines()[:2]
    assert first.startswith("#1 offered=2 calls=tool_search ")
    assert "deferred=?get_weather,?send_email" in first
    assert "searches=1 discovered=+get_weather" in first
    assert "deferred=?send_email" in second and "discovered" not in second


def test_a_recorded_hosted_search_converts_to_a_search_step() -> None:
    from harness.cassettes._to_scenario import _search_steps
    from harness.loop import ModelResponse
    from harness.messages import AssistantMessage, HostedSearch, ToolCall

    search_made = HostedSearch(
        id="srv_1", tool="tool_search", arguments='{"query": "weather"}', found=("get_weather",)
    )
    message = AssistantMessage(
        searches=(search_made,),
        tool_calls=(ToolCall(id="c1", name="get_weather", arguments='{"city": "Paris"}'),),
    )
    steps = _search_steps(ModelResponse(message=message))
    assert steps == [{"search": {"query": "weather"}, "found": ["get_weather"], "id": "srv_1"}]
    assert _search_steps(None) == []
