"""Token counts are numbers (issue 34 section 5): a response whose usage is negative, a
fraction, infinite or text is a ``MalformedResponse`` naming the field and the value, in
every format; a recording holding one is a ``CassetteError`` naming the cassette and the
interaction, never a ``ValueError``/``OverflowError`` or a silently truncated count."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fixtures.customers import search_customer
from harness import CassetteError, EntityDiscovery, MalformedResponse, run
from harness.cassettes import CassetteModel
from harness.formats import anthropic_messages, openai_chat, openai_responses

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "cassettes" / "recorded" / "entity_discovery.yaml"
BAD = [(-500, r"an integer \(-500\)"), (10.9, r"a number \(10\.9\)"), ("abc", "a string"),
       (float("inf"), r"a number \(inf\)")]  # fmt: skip


def chat_body(usage: dict[str, Any]) -> dict[str, Any]:
    message = {"role": "assistant", "content": "x"}
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": usage}


def responses_body(usage: dict[str, Any]) -> dict[str, Any]:
    text = {"type": "output_text", "text": "x"}
    item = {"type": "message", "role": "assistant", "content": [text]}
    return {"object": "response", "status": "completed", "output": [item], "usage": usage}


def messages_body(usage: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "content": [{"type": "text", "text": "x"}], "usage": usage}


FORMATS = {
    "openai-chat": (openai_chat.response_from_body, chat_body, "prompt_tokens"),
    "openai-responses": (openai_responses.response_from_body, responses_body, "input_tokens"),
    "anthropic-messages": (anthropic_messages.response_from_body, messages_body, "input_tokens"),
}


@pytest.mark.parametrize(("value", "shown"), BAD)
@pytest.mark.parametrize("name", list(FORMATS))
def test_a_count_that_is_no_integer_of_zero_or_more_is_malformed(
    name: str, value: Any, shown: str
) -> None:
    read, body, key = FORMATS[name]
    with pytest.raises(
        MalformedResponse, match=rf"usage\.{key} must be an integer >= 0, got {shown}"
    ):
        read(body({key: value}))
    assert read(body({key: 7})).usage.input_tokens == 7


@pytest.mark.parametrize(
    ("recorded", "shown"),
    [('"abc"', "a string ('abc')"), ("1e999", "a number (inf)"), ("10.9", "a number (10.9)")],
)
def test_a_recording_with_a_bad_count_names_the_cassette_and_the_interaction(
    tmp_path: Path, recorded: str, shown: str
) -> None:
    path = tmp_path / "bad_usage.yaml"
    text = RECORDED.read_text(encoding="utf-8")
    path.write_text(text.replace('"prompt_tokens":393', f'"prompt_tokens":{recorded}'), "utf-8")
    model = CassetteModel(path)
    with pytest.raises(CassetteError) as caught:
        run(model, model.prompt, system=model.system, tools=[search_customer],
            strategies=[EntityDiscovery()])  # fmt: skip
    message = str(caught.value)
    assert f"cassette {str(path)!r}: request 2 (interaction 2)" in message
    assert f"usage.prompt_tokens must be an integer >= 0, got {shown}" in message
