"""Every real cassette (the project's copies in ``cassettes/real``, ``$HARNESS_CORPUS`` or
the shared corpus, and the project's own recordings) loads, replays through vcrpy under
the semantic matcher (the real SDK and the project's adapters), drives the loop through
the cassette model, shows and converts.

Expectations come from each file itself, so any real cassette dropped into the folder
is checked too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anthropic
import boto3
import botocore.config
import botocore.exceptions
import httpx2
import openai
import pytest
import yaml
from corpus import (
    COST,
    REAL,
    corpus_files,
    ids,
    project_cassettes,
    raw_interactions,
)
from gemini_replay import is_gemini, replay_adapter, replay_sdk

from harness.cassettes import (
    Cassette,
    CassetteExhausted,
    CassetteModel,
    Conversation,
    RecordedSession,
    codec_for,
    conversations_of,
    load_cassette,
    scenario_data,
)
from harness.cassettes._load import Interaction
from harness.cassettes._model import llm_turns
from harness.cassettes._show import show_cassette
from harness.formats.bedrock_converse import route_of
from harness.loop import ModelRequest, ModelSettings, run
from harness.messages import AssistantMessage, SystemMessage
from harness.models import (
    AnthropicModel,
    BedrockConverseModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
)
from harness.scenarios import load_scenario, run_scenario
from harness.testing import open_cassette

FILES = corpus_files() + project_cassettes()


def _llm(path: Path) -> bool:
    return any(codec_for(i.method, i.path) for i in load_cassette(path).interactions)


def test_real_recordings_ship_with_the_project_and_are_iterated_not_listed() -> None:
    """A fresh clone has real recordings to test (no skip without ../shared/corpus)."""
    shipped = sorted(p for p in REAL.rglob("*.yaml") if COST not in p.relative_to(REAL).parts)
    assert len(shipped) >= 3, "cassettes/real holds genuine recordings of other projects"
    assert {p.parent.name for p in shipped} >= {"openai", "anthropic"}
    assert set(shipped) <= set(corpus_files())
    assert set(REAL.rglob(f"*/{COST}/*.yaml")) <= set(corpus_files())  # none left out
    assert project_cassettes(), "cassettes/recorded holds the project's real recordings"


def test_a_recording_in_both_places_is_tested_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    import corpus

    shipped = sorted(p for p in REAL.rglob("*.yaml") if COST not in p.relative_to(REAL).parts)[0]
    copy = tmp_path / shipped.parent.name / "same_bytes_other_name.yaml"
    copy.parent.mkdir()
    copy.write_bytes(shipped.read_bytes())
    other = tmp_path / "anthropic" / "another.yaml"
    other.parent.mkdir(exist_ok=True)
    other.write_text("interactions: []\nversion: 1\n")
    monkeypatch.setenv("HARNESS_CORPUS", str(tmp_path))
    try:
        reloaded = importlib.reload(corpus)
        found = reloaded.recordings()
        assert shipped in found and other in found and copy not in found
        assert all("anthropic" in p.parts for p in reloaded.recordings("anthropic"))
        assert other in reloaded.recordings("anthropic")
    finally:
        monkeypatch.undo()
        importlib.reload(corpus)


@pytest.mark.parametrize("path", FILES, ids=ids(FILES))
def test_loads_through_the_public_path(path: Path) -> None:
    raw = raw_interactions(path)
    cassette = load_cassette(path)
    assert len(cassette) == len(raw)
    for item, interaction in zip(raw, cassette.interactions, strict=False):
        response = item["response"]
        assert interaction.uri == item["request"]["uri"]
        if "status_code" in response:  # vcrpy 4's httpx stubs: the content stored decoded
            assert cassette.variant == "httpx_content"
            assert interaction.status == response["status_code"]
            assert interaction.response.body == response["content"].encode()
            continue
        status = response["status"]  # pydantic-ai's newer variant: a bare int
        assert interaction.status == (status if isinstance(status, int) else status["code"])
        if isinstance(item["request"].get("body"), dict) and "type" in item["request"]["body"]:
            assert cassette.variant == "typed_json"
        else:
            parsed = any("parsed_body" in part for part in (item["request"], response))
            if parsed or cassette.variant != "parsed_body":  # one file, one variant
                assert cassette.variant == ("parsed_body" if parsed else "vcrpy")
        if interaction.request.body and codec_for(interaction.method, interaction.path):
            assert interaction.request.json() is not None, "request bodies are JSON"


_SUFFIX = {
    "openai-chat": "/chat/completions",
    "openai-responses": "/responses",
    "anthropic-messages": "/v1/messages",
}


def _base_url(uri: str, path: str, codec_name: str) -> str:
    parts = urlsplit(uri)
    prefix = path[: path.rindex(_SUFFIX[codec_name])]
    return f"{parts.scheme}://{parts.netloc}{prefix}"


def _bedrock(interaction: Interaction) -> Any:
    """boto3's bedrock-runtime client, pointed at the recorded host (vcrpy answers), with
    dummy credentials and the region set: nothing is looked up on the network."""
    parts = urlsplit(interaction.uri)
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=f"{parts.scheme}://{parts.netloc}",
        aws_access_key_id="AKIAHARNESSREPLAY000",
        aws_secret_access_key="harness-replay-secret",
        config=botocore.config.Config(retries={"total_max_attempts": 1}),
    )


def _bedrock_replay(interaction, codec) -> None:  # type: ignore[no-untyped-def]
    """One recorded Bedrock call made again through boto3 (vcrpy answers it)."""
    route = route_of(interaction.path)
    assert route is not None
    client = _bedrock(interaction)
    body = interaction.request.json()
    if interaction.status >= 400:
        with pytest.raises(botocore.exceptions.ClientError):
            client.converse(modelId=route.model, **body)
        return
    expected = codec.decode_response(
        interaction.status, interaction.response.headers, interaction.response.body
    )
    if route.converse and route.stream:
        events = list(client.converse_stream(modelId=route.model, **body)["stream"])
        assert codec.decode_events(events) == expected
    elif route.converse:
        assert codec.decode_json(client.converse(modelId=route.model, **body)) == expected
    else:  # InvokeModel: the body is Anthropic's, the answer too
        raw = json.dumps(body).encode()
        if route.stream:
            answer = client.invoke_model_with_response_stream(modelId=route.model, body=raw)
            events = [json.loads(e["chunk"]["bytes"]) for e in answer["body"]]
            assert codec.decode_events(events) == expected
        else:
            answer = client.invoke_model(modelId=route.model, body=raw)
            assert codec.decode_json(json.loads(answer["body"].read())) == expected


def _client(base_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key="sk-replay", max_retries=0)


def _sdk(interaction, codec_name: str):  # type: ignore[no-untyped-def]
    """The real SDK of the format, pointed at the recorded host (vcrpy answers)."""
    base_url = _base_url(interaction.uri, interaction.path, codec_name)
    if codec_name == "anthropic-messages":
        return anthropic.Anthropic(base_url=base_url, api_key="sk-ant-replay", max_retries=0)
    return _client(base_url)


@pytest.mark.parametrize("path", FILES, ids=ids(FILES))
def test_replays_through_the_sdk_under_the_semantic_matcher(path: Path, tmp_path: Path) -> None:
    cassette = load_cassette(path)
    turns = [(i, codec_for(i.method, i.path)) for i in cassette.interactions]
    with open_cassette(path, record_mode="none", unused="error"):
        for interaction, codec in turns:
            if codec is None:  # a format without a codec yet: vcrpy still replays it
                with httpx2.Client() as http:
                    reply = http.request(
                        interaction.method, interaction.uri, content=interaction.request.body
                    )
                assert reply.status_code == interaction.status
                if b"[hidden]" in reply.content:  # a token answer, scrubbed on the way back
                    recorded = json.loads(interaction.response.body)
                    assert json.loads(reply.content).keys() == recorded.keys()
                else:
                    assert reply.content == interaction.response.body
                continue
            if is_gemini(interaction.uri):
                replay_sdk(interaction, codec)
                continue
            if route_of(interaction.path) is not None:
                _bedrock_replay(interaction, codec)
                continue
            client = _sdk(interaction, codec.name)
            body = interaction.request.json()
            suffix = _SUFFIX[codec.name]
            if interaction.status >= 400:
                with pytest.raises((openai.APIStatusError, anthropic.APIStatusError)):
                    client.post(suffix, cast_to=object, body=body)
                continue
            if interaction.is_stream:
                stream_cls = (
                    anthropic.Stream[object]
                    if codec.name == "anthropic-messages"
                    else openai.Stream[object]
                )
                events = list(
                    client.post(
                        suffix, cast_to=object, body=body, stream=True, stream_cls=stream_cls
                    )
                )
                expected = codec.decode_response(
                    interaction.status, interaction.response.headers, interaction.response.body
                )
                via = codec.decode_events(events)
                assert via == expected
            else:
                data = client.post(suffix, cast_to=object, body=body)
                assert data == json.loads(interaction.response.body)


# the anthropic SDK warns about the retired models some real recordings name
@pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")
@pytest.mark.parametrize("path", FILES, ids=ids(FILES))
def test_replays_through_the_adapters_under_the_semantic_matcher(path: Path) -> None:
    cassette = load_cassette(path)
    replayed = 0
    with open_cassette(path, record_mode="none", unused="ignore"):
        for interaction in cassette.interactions:
            codec = codec_for(interaction.method, interaction.path)
            if codec is None or interaction.status >= 400:
                continue
            parsed = codec.parse_request(interaction.request.json())
            request = ModelRequest(
                messages=list(parsed.messages),
                tools=list(parsed.tools),
                tool_names=parsed.tool_names,
                settings=ModelSettings(),
                iteration=1,
            )
            if is_gemini(interaction.uri):
                replayed += replay_adapter(interaction, codec, request)
                continue
            route = route_of(interaction.path)
            if route is not None and not route.converse:
                continue  # InvokeModel: the harness has no adapter over it
            if route is not None:
                model = BedrockConverseModel(
                    _bedrock(interaction), route.model, stream=interaction.is_stream
                )
                got = model.request(request)
                assert got == codec.decode_response(
                    interaction.status, interaction.response.headers, interaction.response.body
                )
                replayed += 1
                continue
            client = _sdk(interaction, codec.name)
            adapter_cls = {
                "openai-chat": OpenAIChatModel,
                "openai-responses": OpenAIResponsesModel,
                "anthropic-messages": AnthropicModel,
            }[codec.name]
            adapter = adapter_cls(client, parsed.model or "m", stream=interaction.is_stream)
            got = adapter.request(request)
            assert got == codec.decode_response(
                interaction.status, interaction.response.headers, interaction.response.body
            )
            replayed += 1
    sdk_cannot = {  # InvokeModel: no adapter; google-genai streams only with alt=sse and
        i.index  # never asks for int enums
        for i, _ in llm_turns(cassette)
        if not getattr(route_of(i.path), "converse", 1)
        or ":streamGenerateContent" in i.uri
        or "enum-encoding" in i.uri
    }
    assert replayed or all(
        i.status >= 400 or i.index in sdk_cannot for i, _ in llm_turns(cassette)
    ), f"{path.name}: no LLM request a codec reads"


def _shape(trace) -> list[tuple]:  # type: ignore[no-untyped-def,type-arg]
    return [
        (
            it.offered,
            tuple((c.name, c.arguments) for c in it.calls),
            it.injected,
            it.removed,
            it.answer,
        )
        for it in trace
    ]


def _rewritten(conversation: Conversation) -> bool:
    """The client kept other calls than the model made, added user messages (nudges after
    tool results, crewAI's; a next user turn), changed the system prompt (a handoff) or
    asked again after a text answer: a plain ``run`` of one turn cannot make the same
    requests (the scenario path replays them: its turns, continuation and writes). The
    client's additions and its own messages after results (RecordedTools writes them) a
    plain run makes too."""
    for k in range(len(conversation.requests) - 1):
        response = conversation.responses[k]
        kept = conversation.kept_answer(k)
        if response is not None and kept is not None and kept != response.message:
            return True
        gap = conversation.gap(k)
        if gap.users or any(isinstance(m, SystemMessage) for m in gap.written):
            return True
        if kept is not None and not kept.tool_calls:
            return True
    return False


def _kept_calls(conversation: Conversation) -> list[str]:
    return [
        c.name
        for k in range(len(conversation.requests))
        for c in (conversation.kept_answer(k) or AssistantMessage()).tool_calls
    ]


@pytest.mark.parametrize("path", FILES, ids=ids(FILES))
def test_every_conversation_drives_the_loop_through_the_cassette_model(path: Path) -> None:
    cassette = load_cassette(path)
    found = conversations_of(cassette)
    assert found, f"{path.name}: no conversation a codec reads (every format has a codec)"
    for conversation in found:
        if _rewritten(conversation):
            continue  # the loop answers every call it is given: the scenario path replays it
        session = RecordedSession.of(conversation)
        model = CassetteModel(
            Cassette(
                path=cassette.path, interactions=conversation.interactions, variant=cassette.variant
            )
        )
        expected = _shape(conversation.trace())
        last = conversation.responses[-1]
        if last is not None and last.message.tool_calls:
            # the recorded agent stopped on an output tool; the loop asks once more
            with pytest.raises(CassetteExhausted, match="ran past the end") as info:
                run(
                    model,
                    list(session.messages),
                    tools=list(session.tools),
                    strategies=[session.strategy],
                )
            assert _shape(info.value.trace)[: len(expected)] == expected
        else:
            result = run(
                model,
                list(session.messages),
                tools=list(session.tools),
                strategies=[session.strategy],
            )
            assert _shape(result.trace) == expected
            assert model.position == len(conversation.requests)


@pytest.mark.parametrize("path", FILES, ids=ids(FILES))
def test_show_prints_every_request_and_call(path: Path) -> None:
    lines = show_cassette(path)
    text = "\n".join(lines)
    assert str(len(load_cassette(path))) in lines[0]
    for conversation in conversations_of(path):
        for interaction, response in zip(
            conversation.interactions, conversation.responses, strict=False
        ):
            assert f"interaction {interaction.index + 1}," in text
            for call in response.message.tool_calls if response else ():
                assert f"call {call.name}(" in text


@pytest.mark.parametrize("path", FILES, ids=ids(FILES))
def test_converts_to_a_scenario_that_passes(path: Path, tmp_path: Path) -> None:
    found = conversations_of(path)
    assert found, f"{path.name}: no conversation a codec reads (every format has a codec)"
    for number in range(len(found)):
        target = tmp_path / f"converted_{number}.yaml"
        target.write_text(yaml.safe_dump(scenario_data(path, conversation=number), sort_keys=False))
        outcome = run_scenario(load_scenario(target))
        assert outcome.passed, outcome.problem
        assert outcome.trace is not None
        recorded_calls = _kept_calls(found[number])
        assert [c.name for c in outcome.trace.calls][: len(recorded_calls)] == recorded_calls


@pytest.mark.parametrize("path", FILES, ids=ids(FILES))
def test_one_scenario_replays_every_recorded_request_in_order(path: Path, tmp_path: Path) -> None:
    """Every conversation of the cassette in one file: every recorded request is made, in
    the recorded order (interleaved conversations included), and the scenario passes."""
    cassette = load_cassette(path)
    found = conversations_of(cassette)
    target = tmp_path / "all.yaml"
    target.write_text(yaml.safe_dump(scenario_data(cassette), sort_keys=False))
    outcome = run_scenario(load_scenario(target))
    assert outcome.passed, outcome.problem
    extra = sum(  # a recording that stops on a tool call gets one more request
        1 for c in found if c.responses[-1] is not None and c.responses[-1].message.tool_calls
    )
    assert outcome.model_requests == len(llm_turns(cassette)) + extra
    sessions = outcome.sessions  # files with sessions or turns: one outcome per conversation
    if len(found) > 1:
        order = [
            n
            for _, n in sorted(
                (i.index, s.name)
                for s, c in zip(sessions, found, strict=True)
                for i in c.interactions
            )
        ]
        assert load_scenario(target).spec.expect.requests == order
    for session, conversation in zip(sessions, found if sessions else (), strict=True):
        assert session.trace is not None
        assert [c.name for c in session.trace.calls][: len(_kept_calls(conversation))] == (
            _kept_calls(conversation)
        )


@pytest.mark.parametrize("path", FILES, ids=ids(FILES))
def test_the_cli_shows_and_converts_to_a_scenario_harness_run_passes(
    path: Path, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from harness.cli._app import app

    runner = CliRunner()
    shown = runner.invoke(app, ["cassette", "show", str(path)])
    assert shown.exit_code == 0, shown.output
    for interaction, _codec in llm_turns(load_cassette(path)):
        assert f"interaction {interaction.index + 1}, POST {interaction.path}" in shown.output
    target = tmp_path / "scenario.yaml"
    wrote = runner.invoke(app, ["cassette", "to-scenario", str(path), "-o", str(target)])
    assert wrote.exit_code == 0, wrote.output
    found = conversations_of(path)
    replies = sum(1 for c in found if c.responses[-1] and c.responses[-1].message.tool_calls)
    summary = f"{sum(len(c.requests) for c in found)} recorded request(s)"
    assert summary in wrote.output  # the recorded ones, apart from the replies added
    assert (f"{replies} final repl" in wrote.output) == bool(replies)
    ran = runner.invoke(app, ["run", str(target)])
    assert ran.exit_code == 0, ran.output
    assert "1 passed, 0 failed" in ran.output
