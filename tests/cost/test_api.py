"""``analyse`` on recordings it cannot read says why (typed errors naming the cassette)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import UsageError
from harness.cassettes import load_cassette
from harness.cost import analyse, analyse_cassette


def _interaction(
    path: str, body: dict[str, Any], status: int = 200, answer: str = "{}"
) -> dict[str, Any]:
    return {
        "request": {
            "method": "POST",
            "uri": f"https://api.example.invalid{path}",
            "body": json.dumps(body),
            "headers": {},
        },
        "response": {
            "status": {"code": status, "message": ""},
            "headers": {"content-type": ["application/json"]},
            "body": {"string": answer},
        },
    }


CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 10,
    "messages": [{"role": "user", "content": "hi"}],
}


def test_a_cassette_without_llm_requests_is_refused() -> None:
    cassette = load_cassette({"interactions": [_interaction("/v1/files", {"purpose": "x"})]})
    with pytest.raises(UsageError, match="holds no LLM request"):
        analyse(cassette)


def test_a_cassette_mixing_formats_is_refused() -> None:
    cassette = load_cassette(
        {
            "interactions": [
                _interaction("/v1/chat/completions", CHAT),
                _interaction("/v1/messages", MESSAGES),
            ]
        }
    )
    with pytest.raises(UsageError, match="mixes wire formats"):
        analyse_cassette(cassette)


def test_an_error_answer_leaves_the_request_without_recorded_figures() -> None:
    cassette = load_cassette(
        {
            "interactions": [
                _interaction(
                    "/v1/chat/completions", CHAT, 429, '{"error": {"message": "slow down"}}'
                )
            ]
        }
    )
    report = analyse(cassette)
    assert report.model == "gpt-4o" and report.rules.format == "openai-chat"
    assert [r.recorded for r in report.requests] == [None]
    assert report.requests[0].input_tokens > 0
