"""Gemini recordings through the cassette paths: the model read from the path, a
streamed JSON array known as a stream, headers stored as bytes, the conversation of
calls sent without ids, and an explicit cache read by the cost model."""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from harness import llm_tool
from harness.cassettes import CassetteModel, conversations_of, load_cassette
from harness.cassettes._show import show_data
from harness.cost import analyse
from harness.loop import run
from harness.models import (
    GeminiModel,
    ScriptedModel,
    call,
    reply,
)
from harness.testing import open_cassette

URI = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:"
ANSWER = {
    "candidates": [
        {
            "content": {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            "finishReason": "STOP",
        }
    ],
    "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2},
}


def _write(path: Path, uri: str, body: bytes, headers: Mapping[Any, object]) -> Path:
    request = {
        "contents": [{"parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "f"}]}],
    }
    data = {
        "version": 1,
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": uri,
                    "body": json.dumps(request),
                    "headers": {},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": headers,
                    "body": {"string": body},
                },
            }
        ],
    }
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_streamed_json_array_with_bytes_headers_reads_as_a_stream(tmp_path: Path) -> None:
    body = gzip.compress(json.dumps([ANSWER]).encode())
    headers = {b"Content-Encoding": [b"gzip"], "Content-Type": [b"application/json"]}
    cassette = load_cassette(
        _write(tmp_path / "c.yaml", URI + "streamGenerateContent", body, headers)
    )
    interaction = cassette.interactions[0]
    assert interaction.response.headers["content-encoding"] == "gzip"
    assert interaction.is_stream
    shown = show_data(cassette)["conversations"][0]["requests"][0]
    assert shown["provider"] == "gemini-generate" and shown["model"] == "gemini-2.5-flash"
    assert shown["stream"] is True and shown["response"]["calls"] == ["f"]
    (conversation,) = conversations_of(cassette)
    assert conversation.requests[0].model == "gemini-2.5-flash"


def test_a_plain_answer_is_not_a_stream(tmp_path: Path) -> None:
    cassette = load_cassette(
        _write(tmp_path / "c.yaml", URI + "generateContent", json.dumps(ANSWER).encode(), {})
    )
    assert not cassette.interactions[0].is_stream


def test_a_recording_of_the_adapter_replays_through_the_cassette_model(tmp_path: Path) -> None:
    """Calls sent without ids get the same ids in the answer and in the next history, so
    the recording plays back into the loop."""
    from harness.models import WireServer

    @llm_tool
    def f() -> str:
        """A tool."""
        return "ok"

    script = ScriptedModel([call("f"), reply("done")])
    path = tmp_path / "rec.yaml"
    with WireServer(script) as server, open_cassette(path, record_mode="once"):
        from google import genai
        from google.genai import types

        client = genai.Client(
            api_key="AIza" + "T" * 35,
            http_options=types.HttpOptions(base_url=server.url.removesuffix("/v1") + "/"),
        )
        run(GeminiModel(client, stream=True), "hi", tools=[f])
    assert "AIza" not in path.read_text()
    model = CassetteModel(path)
    result = run(model, model.prompt or "", tools=[f])
    assert result.output == "done" and model.position == 2


def test_the_explicit_cache_is_read_in_front_of_the_requests_naming_it() -> None:
    path = Path(__file__).resolve().parents[2] / "cassettes" / "real" / "gemini" / "cost"
    files = sorted(path.glob("*.yaml"))
    cached = [p for p in files if "cachedContents" in p.read_text()]
    assert cached, "the explicit-cache recording ships in cassettes/real/gemini/cost"
    report = analyse(cached[0])
    rows = [r for r in report.requests if r.recorded is not None]
    assert len(report.requests) == len(rows) + 1  # the cache's creation writes it
    for row in rows:
        assert row.recorded is not None and row.recorded.cache_read_tokens
        assert 0.9 <= row.cached_tokens / row.recorded.cache_read_tokens <= 1.1
