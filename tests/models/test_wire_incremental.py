"""The wire fake reads only what a request adds to the history it accepted last.

Decoding (``BodyDecoder``) and reading (Chat Completions, Responses API) reuse the
previous request's work when the new body repeats its history; every result and
every error must be what reading the whole body afresh gives.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from wire_helpers import KINDS, RESPONSES_TOOLS, TOOLS, Canned

from harness.formats import WireError
from harness.formats.openai_responses import (
    RequestReader,
    request_from_body as parse_responses_request,
)
from harness.models import FAKE_BASE_URL, OpenAIWireTransport
from harness.models._wire._app import WireApp
from harness.models._wire._decode import BodyDecoder

# -- decoding ---------------------------------------------------------------------------

_json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_json = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)
_STYLES = [
    {"separators": (",", ":"), "ensure_ascii": False},
    {"separators": (", ", ": ")},
    {"indent": 1},
]


def _outcome(body: bytes) -> tuple[str, str]:
    """What ``json.loads`` gives: the value's repr (types and key order) or the error."""
    try:
        return "ok", repr(json.loads(body))
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def _decoded(decoder: BodyDecoder, body: bytes) -> tuple[str, str]:
    try:
        return "ok", repr(decoder.decode(body))
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    history=st.lists(_json, max_size=6),
    before=st.dictionaries(st.sampled_from(["model", "include", "z"]), _json, max_size=2),
    after=st.dictionaries(st.sampled_from(["tools", "stream", "messages", "q"]), _json, max_size=2),
    cuts=st.lists(st.integers(0, 6), min_size=1, max_size=5),
    style=st.sampled_from(_STYLES),
    damage=st.sampled_from(["", "truncate", "garbage", "bom", "edit"]),
)
def test_decoding_is_json_loads_for_any_sequence_of_bodies(
    history: list[Any],
    before: dict[str, Any],
    after: dict[str, Any],
    cuts: list[int],
    style: dict[str, Any],
    damage: str,
) -> None:
    decoder = BodyDecoder("messages")
    for cut in cuts:  # growing, shrinking and repeated histories
        body = json.dumps({**before, "messages": history[:cut], **after}, **style).encode()
        if damage == "truncate":
            body = body[: len(body) * 3 // 4]
        elif damage == "garbage":
            body += b" x"
        elif damage == "bom":
            body = b"\xef\xbb\xbf" + body
        elif damage == "edit" and cut:
            body = body.replace(b"[", b"[1,", 1)
        assert _decoded(decoder, body) == _outcome(body)


def test_an_extended_history_reuses_the_decoded_items() -> None:
    decoder = BodyDecoder("messages")
    first = decoder.decode(b'{"model": "m", "messages": [{"a": 1}, {"b": 2}], "tools": []}')
    second = decoder.decode(b'{"model": "m", "messages": [{"a": 1}, {"b": 2}, {"c": 3}], "x": 1}')
    assert second == {"model": "m", "messages": [{"a": 1}, {"b": 2}, {"c": 3}], "x": 1}
    assert second["messages"][0] is first["messages"][0]  # not parsed again
    assert second["messages"] is not first["messages"]


def test_an_edited_past_is_decoded_afresh() -> None:
    decoder = BodyDecoder("messages")
    decoder.decode(b'{"messages": [{"a": 1}, {"b": 2}]}')
    edited = decoder.decode(b'{"messages": [{"a": 9}, {"b": 2}, {"c": 3}]}')
    assert edited == {"messages": [{"a": 9}, {"b": 2}, {"c": 3}]}
    same_length = decoder.decode(b'{"messages": [{"a": 9}, {"b": 5}, {"c": 3}]}')
    assert same_length["messages"][1] == {"b": 5}


def test_a_repeated_history_key_keeps_the_last_value_like_json_loads() -> None:
    decoder = BodyDecoder("messages")
    body = b'{"messages": [1, 2], "model": "m", "messages": [3]}'
    assert decoder.decode(body) == json.loads(body) == {"messages": [3], "model": "m"}
    extended = b'{"messages": [1, 2, 4], "model": "m", "messages": [3]}'
    assert decoder.decode(extended) == json.loads(extended)


# -- reading the Responses API input incrementally -------------------------------------


def _call(i: int, name: str = "get_weather") -> dict[str, Any]:
    return {"type": "function_call", "call_id": f"c{i}", "name": name, "arguments": "{}"}


def _output(i: int) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": f"c{i}", "output": f"r{i}"}


_ITEMS = {
    "user": lambda i: {"role": "user", "content": f"u{i}"},
    "assistant": lambda i: {"role": "assistant", "content": f"a{i}"},
    "call": _call,
    "output": _output,
    "stale_output": lambda i: _output(max(0, i - 3)),
    "reasoning": lambda i: {"type": "reasoning", "id": f"rs{i}", "summary": []},
    "bad": lambda i: {"type": "computer_call"},
    "not_object": lambda i: "text",
}


def _read_fresh(body: dict[str, Any]) -> tuple[str, Any]:
    try:
        wire = parse_responses_request(body)
    except WireError as exc:
        return "error", (exc.status, str(exc))
    return "ok", (list(wire.request.messages), wire.request.iteration)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kinds=st.lists(st.sampled_from(list(_ITEMS)), min_size=1, max_size=10),
    cuts=st.lists(st.integers(1, 10), min_size=1, max_size=4),
    instructions=st.sampled_from([None, "Be brief."]),
)
def test_reading_responses_input_incrementally_is_reading_it_afresh(
    kinds: list[str], cuts: list[int], instructions: str | None
) -> None:
    items = [_ITEMS[kind](i) for i, kind in enumerate(kinds)]
    reader = RequestReader()  # remembers the last accepted input; a refused one changes nothing
    for cut in sorted(cuts):  # each request repeats the previous input, with more items
        body: dict[str, Any] = {"model": "m", "input": items[:cut], "tools": RESPONSES_TOOLS}
        if instructions:
            body["instructions"] = instructions
        assert _read_with(reader, body) == _read_fresh(body)


def _read_with(reader: RequestReader, body: dict[str, Any]) -> tuple[str, Any]:
    try:
        wire = reader.read(body)
    except WireError as exc:
        return "error", (exc.status, str(exc))
    return "ok", (list(wire.request.messages), wire.request.iteration)


def test_an_output_answering_an_accepted_call_again_is_read_like_afresh() -> None:
    grown = [{"role": "user", "content": "hi"}, _call(1), _output(1)]
    for extra in ([_output(1)], [_call(1)], [_output(5)], [_call(2), _output(1)]):
        reader = RequestReader()
        assert _read_with(reader, {"model": "m", "input": grown})[0] == "ok"
        body = {"model": "m", "input": [*grown, *extra]}
        assert _read_with(reader, body) == _read_fresh(body)


def test_a_call_split_across_requests_joins_the_assistant_turn() -> None:
    """After an assistant message, a new function_call item joins it: read afresh."""
    first = {"model": "m", "input": [{"role": "user", "content": "hi"}, _ITEMS["assistant"](1)]}
    reader = RequestReader()
    reader.read(first)
    body = {**first, "input": [*first["input"], _call(2), _output(2)]}
    wire = reader.read(body)
    assert wire.request.messages == parse_responses_request(body).request.messages
    assert wire.request.messages[1].tool_calls[0].id == "c2"  # joined to "a1"


# -- through the transport: same answers as a fresh server ------------------------------


def _answers(path: str, bodies: list[dict[str, Any]]) -> list[tuple[int, Any]]:
    import httpx2

    shared = OpenAIWireTransport(Canned(KINDS["text"], repeat=True))
    answers = []
    with httpx2.Client(transport=shared, base_url=FAKE_BASE_URL) as http:
        for body in bodies:
            answer = http.post(path, json=body)
            fresh = WireApp(Canned(KINDS["text"], repeat=True)).handle(
                "POST", f"/v1{path}", json.dumps(body).encode()
            )
            assert answer.status_code == fresh.status
            payload = answer.json()
            if fresh.status != 200:
                assert payload == json.loads(fresh.body)
            answers.append((answer.status_code, (payload.get("error") or {}).get("message")))
    return answers


def _chat_call(i: int) -> dict[str, Any]:
    function = {"name": "get_weather", "arguments": "{}"}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": f"c{i}", "type": "function", "function": function}],
    }


def _chat_result(i: int) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": f"c{i}", "content": "9C"}


def test_chat_requests_that_change_the_accepted_past_get_the_fresh_errors() -> None:
    user = {"role": "user", "content": "hi"}
    grown = [user, _chat_call(1), _chat_result(1)]
    bodies = [
        {"model": "m", "messages": grown, "tools": TOOLS},
        {"model": "m", "messages": [*grown, _chat_call(2), _chat_result(2)], "tools": TOOLS},
        {"model": "m", "messages": [*grown, _chat_call(2)], "tools": TOOLS},  # unanswered
        {"model": "m", "messages": [user, _chat_call(1), _chat_result(9)], "tools": TOOLS},
        {"model": "m", "messages": [*grown, {"role": "robot"}], "tools": TOOLS},
    ]
    answers = _answers("/chat/completions", bodies)
    assert [status for status, _ in answers] == [200, 200, 400, 400, 400]
    assert "c2" in answers[2][1]


def test_responses_requests_that_change_the_accepted_past_get_the_fresh_errors() -> None:
    user = {"role": "user", "content": "hi"}
    grown = [user, _call(1), _output(1)]
    bodies = [
        {"model": "m", "input": grown, "tools": RESPONSES_TOOLS},
        {"model": "m", "input": [*grown, _call(2), _output(2)], "tools": RESPONSES_TOOLS},
        {"model": "m", "input": [*grown, _call(2), _output(2), _output(1)]},  # answered twice
        {"model": "m", "input": [*grown, _call(2)], "tools": RESPONSES_TOOLS},  # unanswered
        {"model": "m", "input": [user, _call(1), _output(9)], "tools": RESPONSES_TOOLS},
        {"model": "m", "input": [*grown, {"type": "computer_call"}], "tools": RESPONSES_TOOLS},
    ]
    answers = _answers("/responses", bodies)
    assert [status for status, _ in answers] == [200, 200, 200, 400, 400, 400]
    assert "c2" in answers[3][1] and "c9" in answers[4][1]


@pytest.mark.parametrize("path", ["/chat/completions", "/responses"])
def test_the_served_model_sees_the_whole_history_and_the_iteration(path: str) -> None:
    model = Canned(KINDS["text"], repeat=True)
    app = WireApp(model)
    key = "messages" if path == "/chat/completions" else "input"
    call, result = (_chat_call, _chat_result) if key == "messages" else (_call, _output)
    history: list[Any] = [{"role": "user", "content": "hi"}]
    for i in range(4):
        body = {"model": "m", key: history, "tools": TOOLS if key == "messages" else []}
        assert app.handle("POST", f"/v1{path}", json.dumps(body).encode()).status == 200
        assert len(model.requests[-1].messages) == 1 + 2 * i
        assert model.requests[-1].iteration == 1 + i
        history = [*history, call(i), result(i)]
