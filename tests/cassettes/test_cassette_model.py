"""``CassetteModel``: a recording drives the loop in process while the real tools run."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from fixtures.customers import search_customer
from harness import EntityDiscovery, run
from harness._errors import UsageError
from harness.assertions import expect_timeline
from harness.cassettes import (
    CassetteExhausted,
    CassetteMismatch,
    CassetteModel,
    CassetteUnused,
    trace_from_cassette,
)
from harness.models import (
    OpenAIChatModel,
    OpenAIResponsesModel,
    ScriptedModel,
    WireServer,
    call,
    reply,
)
from harness.testing import open_cassette

PROMPT = "What's John Smith's average spend?"
SYSTEM = "You are a CRM assistant."


def _record(path: Path, *, api: str, stream: bool) -> Path:
    script = ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            call("customer_*_get_average_spend"),
            reply("About 42."),
        ]
    )
    with (
        WireServer(script) as server,
        open_cassette(path, record_mode="once"),
        openai.OpenAI(base_url=server.url, api_key="k", max_retries=0) as client,
    ):
        cls = OpenAIChatModel if api == "chat" else OpenAIResponsesModel
        run(
            cls(client, "gpt-4o-mini", stream=stream),
            PROMPT,
            system=SYSTEM,
            tools=[search_customer],
            strategies=[EntityDiscovery()],
        )
    return path


@pytest.fixture(
    scope="module",
    params=[("chat", False), ("chat", True), ("responses", False), ("responses", True)],
    ids=["chat", "chat-stream", "responses", "responses-stream"],
)
def recording(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    api, stream = request.param
    return _record(tmp_path_factory.mktemp("rec") / f"{api}_{stream}.yaml", api=api, stream=stream)


def test_plays_the_recorded_turns_while_real_tools_run(recording: Path) -> None:
    model = CassetteModel(recording)
    assert model.system == SYSTEM and model.prompt == PROMPT
    result = run(
        model,
        model.prompt,
        system=model.system,
        tools=[search_customer],
        strategies=[EntityDiscovery()],
    )
    assert result.output == "About 42."
    assert expect_timeline(
        result,
        [
            "call search_customer",
            "offered gains customer_c123_get_average_spend",
            "call customer_c123_get_average_spend",
            "answer",
        ],
    )
    # the real tool ran: its Python value is in the trace, which no recording holds
    assert result.trace.iterations[0].calls[0].value[0].name == "John Smith"
    assert [it.offered for it in result.trace] == [
        it.offered for it in trace_from_cassette(recording)
    ]


def test_a_missing_injection_is_reported_as_a_regression(recording: Path) -> None:
    model = CassetteModel(recording)
    with pytest.raises(CassetteMismatch) as info:
        run(model, PROMPT, system=SYSTEM, tools=[search_customer], strategies=[])
    message = str(info.value)
    assert "request 2" in message and str(recording) in message
    assert (
        "injection regression: the recording calls customer_c123_get_average_spend, "
        "which is not offered now" in message
    )
    assert "offered tools differ: -customer_c123_get_average_spend" in message


def test_another_prompt_differs_at_request_1(recording: Path) -> None:
    with pytest.raises(CassetteMismatch, match=r"request 1 .*message 1 differs.*Jane"):
        run(
            CassetteModel(recording),
            "What does Jane spend?",
            system=SYSTEM,
            tools=[search_customer],
            strategies=[EntityDiscovery()],
        )


def test_path_only_skips_the_request_checks(recording: Path) -> None:
    result = run(
        CassetteModel(recording, match="path-only"),
        "anything",
        tools=[search_customer],
        strategies=[EntityDiscovery()],
    )
    assert result.output == "About 42."


def test_running_past_the_end_and_stopping_early(recording: Path) -> None:
    model = CassetteModel(recording)
    run(model, PROMPT, system=SYSTEM, tools=[search_customer], strategies=[EntityDiscovery()])
    with pytest.raises(
        CassetteExhausted,
        match=r"holds 3 recorded model turn\(s\), all played; the loop made request 4",
    ):
        run(model, PROMPT, system=SYSTEM, tools=[search_customer], strategies=[EntityDiscovery()])
    model.reset()
    assert model.position == 0


def test_a_run_that_stops_early_leaves_turns_unused(tmp_path: Path) -> None:
    path = _record(tmp_path / "c.yaml", api="chat", stream=False)
    model = CassetteModel(path, match="path-only")
    with pytest.raises(CassetteUnused, match="ended after 2 of 3"):
        _two_turns(model)


def _two_turns(model: CassetteModel) -> None:
    from harness.loop import ModelRequest, ModelSettings

    request = ModelRequest(
        messages=[],
        tools=[],
        tool_names=("search_customer", "customer_c123_get_average_spend"),
        settings=ModelSettings(),
        iteration=1,
    )
    model.request(request)
    model.request(request)
    model.end_run(completed=True)


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    path = _record(tmp_path / "c.yaml", api="chat", stream=False)
    with pytest.raises(UsageError, match=r"match=\.\.\.\) must be one of .*got 'fuzzy'"):
        CassetteModel(path, match="fuzzy")
    with pytest.raises(UsageError, match=r"unused=\.\.\.\) must be one of 'error', 'ignore'"):
        CassetteModel(path, unused="warn")
    empty = tmp_path / "empty.yaml"
    empty.write_text("interactions: []\nversion: 1\n")
    with pytest.raises(UsageError, match="holds no LLM request"):
        CassetteModel(empty)


# -- what a recording's format supports: a replay picks the native tools the client did ----


def _weather(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


def _email(to: str) -> str:
    """Send an email."""
    return "sent"


def test_a_chat_recording_with_a_tool_search_replays_with_the_same_search(tmp_path: Path) -> None:
    """``ToolSearch()`` through the Chat adapter offers the local ``tool_search`` (Chat
    has no provider search); replaying that recording must too, not Anthropic's BM25 tool
    (a ``UsageError``: Chat Completions cannot send it)."""
    from harness.injection import ToolSearch
    from harness.models import search

    path = tmp_path / "chat_search.yaml"
    script = ScriptedModel([search("weather"), call("_weather", city="Paris"), reply("Sunny.")])
    with (
        WireServer(script) as server,
        open_cassette(path, record_mode="once"),
        openai.OpenAI(base_url=server.url, api_key="k", max_retries=0) as client,
    ):
        recorded = run(
            OpenAIChatModel(client, "gpt-4o-mini"),
            "Weather in Paris?",
            strategies=[ToolSearch([_weather, _email])],
        )
    model = CassetteModel(path)
    assert model.capabilities.tool_search == ()
    replayed = run(model, "Weather in Paris?", strategies=[ToolSearch([_weather, _email])])
    assert replayed.output == recorded.output == "Sunny."
    assert replayed.trace.to_dict() == recorded.trace.to_dict()
    assert "tool_search" in replayed.trace.iterations[0].offered


DECLARED = {
    "chat": ((), True),
    "responses": (("hosted", "client"), True),
    "messages": (("regex", "bm25", "client"), False),
}
"""What each API's adapter declares (tool searches, allowed subsets), by the recordings'
file-name prefix in cassettes/real/."""


@pytest.mark.parametrize("api", sorted(DECLARED))
def test_a_cassette_model_declares_what_its_formats_adapter_declares(api: str) -> None:
    real = Path(__file__).resolve().parents[2] / "cassettes" / "real"
    paths = [
        p
        for p in sorted(real.rglob(f"{api}_*.yaml"))
        if "_then_" not in p.name  # one API each
    ]
    assert paths, f"no {api} recording in {real}"
    tool_search, allowed_tools = DECLARED[api]
    for path in paths:
        model = CassetteModel(path, unused="ignore")
        if len({codec.name for _, codec in model.turns}) > 1:
            continue  # two APIs (a failover): what both declare, tested apart
        assert model.capabilities.tool_search == tool_search, path.name
        assert model.capabilities.allowed_tools is allowed_tools, path.name
