"""Replaying through vcrpy with the harness's matchers: meaning, not bytes; readable errors.

Cassettes are recorded over real loopback HTTP from the wire fake, then replayed with
the server gone, through the real ``openai`` SDK and the project's adapter.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml

from fixtures.customers import search_customer
from harness import EntityDiscovery, run
from harness.cassettes import (
    CassetteExhausted,
    CassetteMismatch,
    CassetteUnused,
    CassetteWarning,
    load_cassette,
)
from harness.models import OpenAIChatModel, ScriptedModel, WireServer, call, reply
from harness.testing import open_cassette
from harness.testing._vcr import expand_match_on

PROMPT = "What's John Smith's average spend?"


def _script() -> ScriptedModel:
    return ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            call("customer_*_get_average_spend"),
            reply("About 42."),
        ]
    )


def _run(client: openai.OpenAI, *, tools=None, prompt: str = PROMPT, strategies=None):  # type: ignore[no-untyped-def]
    return run(
        OpenAIChatModel(client, "gpt-4o-mini"),
        prompt,
        system="You are a CRM assistant.",
        tools=tools if tools is not None else [search_customer],
        strategies=strategies if strategies is not None else [EntityDiscovery()],
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cassettes") / "discovery.yaml"
    with (
        WireServer(_script()) as server,
        open_cassette(path, record_mode="once"),
        openai.OpenAI(base_url=server.url, api_key="sk-live-secret", max_retries=0) as client,
    ):
        _run(client)
    return path


def _client() -> openai.OpenAI:
    return openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="sk-replay", max_retries=0)


def test_the_same_conversation_replays(recorded: Path) -> None:
    with open_cassette(recorded, record_mode="none", unused="error"), _client() as client:
        result = _run(client)
    assert result.output == "About 42."
    assert [c.name for c in result.trace.calls] == [
        "search_customer",
        "customer_c123_get_average_spend",
    ]


def test_volatile_fields_and_key_order_are_ignored(recorded: Path, tmp_path: Path) -> None:
    data = yaml.safe_load(recorded.read_text())
    import json

    for item in data["interactions"]:
        body = json.loads(item["request"]["body"])
        body = dict(reversed(list(body.items())))
        body["user"] = "someone"
        body["metadata"] = {"run": "42"}
        body["stream_options"] = {"include_usage": True}
        item["request"]["body"] = json.dumps(body, indent=2)
    changed = tmp_path / "volatile.yaml"
    changed.write_text(yaml.safe_dump(data))
    with open_cassette(changed, record_mode="none", unused="error"), _client() as client:
        assert _run(client).output == "About 42."


def test_another_prompt_is_a_mismatch_naming_the_message(recorded: Path) -> None:
    with (
        pytest.raises(CassetteMismatch) as info,
        open_cassette(recorded, record_mode="none", unused="ignore"),
        _client() as client,
    ):
        _run(client, prompt="What's Jane Doe's average spend?")
    message = str(info.value)
    assert str(recorded) in message
    assert "request 1" in message
    assert "interaction 1 of 3" in message
    assert "message 1 differs" in message
    assert "Jane Doe" in message


def test_a_mismatch_is_one_report_with_the_run_kept_and_no_unused_warning(
    recorded: Path,
) -> None:
    """Not chained under vcrpy's exception (its advice names record modes the harness
    refuses); the run's trace survives on the error; the interactions the refused
    request left unplayed are not reported a second time (``unused="error"``)."""
    with (
        pytest.raises(CassetteMismatch) as info,
        open_cassette(recorded, record_mode="none", unused="error"),
        _client() as client,
    ):
        _run(client, prompt="What's Jane Doe's average spend?")
    error = info.value
    assert error.__cause__ is None and error.__suppress_context__
    assert "new_episodes" not in str(error)


def test_the_harness_error_keeps_the_run_of_an_error_in_the_chain(tmp_path: Path) -> None:
    """When the refusal reached the loop as a provider error (the SDK wrapped it), the
    run's trace and history it carries move to the harness's error."""
    from vcr.cassette import Cassette  # type: ignore[import-untyped]
    from vcr.errors import CannotOverwriteExistingCassetteException  # type: ignore[import-untyped]
    from vcr.request import Request  # type: ignore[import-untyped]

    from harness import ProviderError
    from harness.cassettes import CassetteExhausted
    from harness.testing._vcr import translate_error

    refused = CannotOverwriteExistingCassetteException(
        cassette=Cassette(str(tmp_path / "empty.yaml")),
        failed_request=Request("POST", "http://127.0.0.1:9/v1/chat/completions", b"{}", {}),
    )
    wrapped = ProviderError("Connection error.")
    wrapped.__cause__ = refused
    wrapped.attach_run(trace="the trace", messages=["a message"])
    error = translate_error(wrapped)
    assert isinstance(error, CassetteExhausted)
    assert (error.trace, error.messages) == ("the trace", ["a message"])


def test_an_injection_regression_names_the_tools(recorded: Path) -> None:
    """Without the discovery strategy, request 2 offers fewer tools than recorded."""
    with (
        pytest.raises(CassetteMismatch) as info,
        open_cassette(recorded, record_mode="none", unused="ignore"),
        _client() as client,
    ):
        _run(client, strategies=[])
    message = str(info.value)
    assert "request 2" in message
    assert (
        "offered tools differ: -customer_c123_get_average_spend -customer_c123_list_orders "
        "-customer_c123_get_contact" in message
    )


def test_path_only_serves_whatever_was_recorded(recorded: Path) -> None:
    with (
        open_cassette(recorded, record_mode="none", match_on=["path-only"], unused="ignore"),
        _client() as client,
    ):
        result = _run(client, prompt="Something else entirely")
    assert result.trace.calls[0].name == "search_customer"


def test_strict_also_compares_other_fields(recorded: Path) -> None:
    with (
        pytest.raises(CassetteMismatch, match="field 'temperature' differs"),
        open_cassette(recorded, record_mode="none", match_on=["strict"], unused="ignore"),
        _client() as client,
    ):
        run(
            OpenAIChatModel(client, "gpt-4o-mini", defaults={"temperature": 0.5}),
            PROMPT,
            system="You are a CRM assistant.",
            tools=[search_customer],
            strategies=[EntityDiscovery()],
        )


def _twice(client: openai.OpenAI) -> None:
    _run(client)
    _run(client)


def test_running_past_the_end_names_the_cassette_and_its_size(recorded: Path) -> None:
    with (
        pytest.raises(CassetteExhausted) as info,
        open_cassette(recorded, record_mode="none", unused="ignore"),
        _client() as client,
    ):
        _twice(client)
    message = str(info.value)
    assert "ran past the end" in message
    assert str(recorded) in message
    assert "holds 3 interaction(s)" in message
    assert "request 4" in message


def test_unused_interactions_error_or_warn(recorded: Path) -> None:
    def first_turn_only() -> None:
        with _client() as client:
            client.chat.completions.create(
                **OpenAIChatModel(client, "gpt-4o-mini").params(_first_request())
            )

    with (
        pytest.raises(CassetteUnused, match="2 of 3 recorded interaction"),
        open_cassette(recorded, record_mode="none", unused="error"),
    ):
        first_turn_only()
    with (
        pytest.warns(CassetteWarning, match="never requested: 2"),
        open_cassette(recorded, record_mode="none", unused="warn"),
    ):
        first_turn_only()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with open_cassette(recorded, record_mode="none", unused="ignore"):
            first_turn_only()


def _first_request() -> Any:
    from harness.loop import ModelRequest, ModelSettings
    from harness.messages import SystemMessage, UserMessage
    from harness.tools import as_tool

    tool = as_tool(search_customer)
    return ModelRequest(
        messages=[SystemMessage(content="You are a CRM assistant."), UserMessage(content=PROMPT)],
        tools=[tool.definition()],
        tool_names=(tool.name,),
        settings=ModelSettings(),
        iteration=1,
    )


def test_credentials_are_not_recorded(recorded: Path) -> None:
    assert "sk-live-secret" not in recorded.read_text()


def test_a_parsed_body_cassette_replays_and_is_rewritten_stock(
    tmp_path: Path, recorded: Path
) -> None:
    import json

    data = yaml.safe_load(recorded.read_text())
    for item in data["interactions"]:
        item["request"]["parsed_body"] = json.loads(item["request"].pop("body"))
        item["response"]["parsed_body"] = json.loads(item["response"].pop("body")["string"])
    variant = tmp_path / "variant.yaml"
    variant.write_text(yaml.safe_dump(data))
    assert load_cassette(variant).variant == "parsed_body"
    with open_cassette(variant, record_mode="none", unused="error"), _client() as client:
        assert _run(client).output == "About 42."
    # new_episodes appends a stock interaction to a parsed_body file
    with (
        WireServer(ScriptedModel([reply("fresh")])) as server,
        open_cassette(variant, record_mode="new_episodes", unused="ignore"),
        openai.OpenAI(base_url=server.url, api_key="k", max_retries=0) as client,
    ):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "new"}])
    text = variant.read_text()
    assert "parsed_body" not in text
    assert len(load_cassette(variant)) == 4


def test_presets_expand_and_unknown_names_are_refused(recorded: Path) -> None:
    assert expand_match_on(None) == ("method", "path", "llm_semantic")
    assert expand_match_on(["path-only", "query"]) == ("method", "path", "query")
    from harness._errors import UsageError

    with (
        pytest.raises(UsageError, match="unknown cassette matcher"),
        open_cassette(recorded, record_mode="none", match_on=["fuzzy"]),
    ):
        pass
    with (
        pytest.raises(UsageError, match="unused='sometimes'"),
        open_cassette(recorded, record_mode="none", unused="sometimes"),
    ):
        pass
