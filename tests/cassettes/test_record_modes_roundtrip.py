"""Every record mode, round trip: record over real loopback HTTP, then replay offline.

The recording is made from the wire fake through the real ``openai`` SDK; the replay
runs with the server gone (a dead loopback port), so only the cassette can answer.
"""

from __future__ import annotations

from pathlib import Path

import openai
import pytest
import yaml

from fixtures.customers import search_customer
from harness import EntityDiscovery, run
from harness.cassettes import CassetteExhausted
from harness.models import OpenAIChatModel, ScriptedModel, WireServer, call, reply
from harness.testing import open_cassette

PROMPT = "What's John Smith's average spend?"
KEY = "sk-live-roundtrip-secret-0123456789"


def _script(answer: str) -> ScriptedModel:
    return ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            call("customer_*_get_average_spend"),
            reply(answer),
        ]
    )


def _run(client: openai.OpenAI) -> str:
    result = run(
        OpenAIChatModel(client, "gpt-4o-mini"),
        PROMPT,
        tools=[search_customer],
        strategies=[EntityDiscovery()],
    )
    return str(result.output)


def _record(path: Path, mode: str, answer: str) -> str:
    with (
        WireServer(_script(answer)) as server,
        open_cassette(path, record_mode=mode, unused="ignore"),
        openai.OpenAI(base_url=server.url, api_key=KEY, max_retries=0) as client,
    ):
        return _run(client)


def _replay(path: Path) -> str:
    with (
        open_cassette(path, record_mode="none", unused="error"),
        openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="sk-replay", max_retries=0) as c,
    ):
        return _run(c)


def _interactions(path: Path) -> int:
    return len(yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"])


@pytest.mark.parametrize("mode", ["once", "new_episodes", "all", "rewrite"])
def test_a_new_cassette_records_then_replays_offline(tmp_path: Path, mode: str) -> None:
    path = tmp_path / f"{mode}.yaml"
    assert _record(path, mode, "About 42.") == "About 42."
    assert _interactions(path) == 3  # one request per iteration
    text = path.read_text(encoding="utf-8")
    assert KEY not in text and "authorization" not in text.lower()
    assert _replay(path) == "About 42."


def test_none_refuses_to_record_a_missing_cassette(tmp_path: Path) -> None:
    from harness import UsageError

    with pytest.raises(UsageError, match="does not exist and record mode is 'none'"):
        _record(tmp_path / "missing.yaml", "none", "x")


def test_once_replays_an_existing_cassette_without_the_server(tmp_path: Path) -> None:
    path = tmp_path / "once.yaml"
    _record(path, "once", "About 42.")
    before = path.read_text(encoding="utf-8")
    # the server now scripts another answer, but 'once' replays what was recorded
    assert _record(path, "once", "Something else.") == "About 42."
    assert path.read_text(encoding="utf-8") == before


def test_all_and_rewrite_replace_the_recording(tmp_path: Path) -> None:
    for mode in ("all", "rewrite"):
        path = tmp_path / f"{mode}.yaml"
        _record(path, "once", "Old answer.")
        assert _record(path, mode, "New answer.") == "New answer."
        assert _interactions(path) == 3  # replaced, not appended
        assert _replay(path) == "New answer."


def test_new_episodes_keeps_what_was_recorded_and_adds_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "episodes.yaml"
    _record(path, "once", "About 42.")
    # the same conversation replays from the file: nothing new is appended
    assert _record(path, "new_episodes", "Never asked.") == "About 42."
    assert _interactions(path) == 3


def test_replaying_past_the_end_names_the_cassette(tmp_path: Path) -> None:
    path = tmp_path / "short.yaml"
    _record(path, "once", "About 42.")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["interactions"] = data["interactions"][:1]
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(CassetteExhausted, match=r"short\.yaml"):
        _replay(path)
