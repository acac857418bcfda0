"""Hostile requests to the loopback wire server: each gets the API's answer, quickly."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import openai
import pytest
from wire_helpers import read_until_closed

from harness import UsageError
from harness.models import ScriptedModel, WireServer, reply
from harness.models._wire._server import DEFAULT_MAX_BODY_BYTES

USER = [{"role": "user", "content": "hi"}]
PATH = "/v1/chat/completions"


def _raw(server: WireServer, head: str, body: bytes = b"", *, timeout: float = 5.0) -> bytes:
    """Send raw bytes and read the whole answer (the server closes these connections)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
        sock.sendall(head.encode() + body)
        return read_until_closed(sock)


def _post(length: str, body: bytes = b"") -> str:
    return (
        f"POST {PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        f"content-length: {length}\r\n\r\n"
    )


def _split(answer: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


def _server(**kw: Any) -> WireServer:
    return WireServer(ScriptedModel([reply("ok")] * 50, lenient=True), **kw)


@pytest.mark.parametrize("length", ["abc", "-1", "1e3", "+5", " ", "٣"])
def test_a_bad_content_length_gets_a_400_at_once(length: str) -> None:
    with _server() as server:
        started = time.monotonic()
        answer = _raw(server, _post(length), b"{}")
        elapsed = time.monotonic() - started
    assert elapsed < 2  # -1 used to hang for the 30 s socket timeout; abc got no answer
    status, data = _split(answer)
    assert status == 400
    assert data["error"]["code"] == "invalid_content_length"
    assert "Invalid Content-Length header" in data["error"]["message"]
    assert data["error"]["type"] == "invalid_request_error"


def test_a_body_over_the_limit_gets_a_413_without_being_read() -> None:
    with _server(max_body_bytes=1000) as server:
        answer = _raw(server, _post(str(100 * 1024 * 1024)))  # announces 100 MB, sends none
        status, data = _split(answer)
        assert status == 413
        assert data["error"]["code"] == "request_too_large"
        assert "more than the limit of 1000 bytes (max_body_bytes)" in data["error"]["message"]
        # a body under the limit is still served
        body = json.dumps({"model": "m", "messages": USER}).encode()
        ok = _raw(
            server, _post(str(len(body))).replace("\r\n\r\n", "\r\nconnection: close\r\n\r\n"), body
        )
        assert _split(ok)[0] == 200


def test_the_default_body_limit_is_a_few_megabytes() -> None:
    assert DEFAULT_MAX_BODY_BYTES == 4 * 1024 * 1024
    with _server() as server:
        assert _split(_raw(server, _post(str(DEFAULT_MAX_BODY_BYTES + 1))))[0] == 413


def test_chunked_bodies_without_a_length_get_a_411() -> None:
    with _server() as server:
        head = f"POST {PATH} HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n"
        status, data = _split(_raw(server, head, b"2\r\n{}\r\n0\r\n\r\n"))
    assert status == 411 and data["error"]["code"] == "missing_content_length"


def _client(server: WireServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="test", timeout=5, max_retries=0)


@pytest.mark.slow
def test_deeply_nested_json_is_a_400_not_a_model_error() -> None:
    body = b'{"model": "m", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with _server() as server:
        answer = _raw(server, _post(str(len(body))), body)
        assert server.errors == []  # the model was never blamed
    status, data = _split(answer)
    assert status == 400
    assert data["error"]["code"] == "invalid_json"
    assert "nested too deeply" in data["error"]["message"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("messages", "hi", "Invalid type for 'messages': expected an array, but got a string"),
        ("messages", {"role": "user"}, "expected an array, but got an object"),
        ("stream", "yes", "Invalid type for 'stream': expected a boolean, but got a string"),
        ("stream", 1, "Invalid type for 'stream': expected a boolean, but got an integer"),
        ("stream_options", "x", "Invalid type for 'stream_options': expected an object"),
    ],
)
def test_wrong_field_types_get_openai_shaped_400s(field: str, value: Any, message: str) -> None:
    body: dict[str, Any] = {"model": "m", "messages": USER, field: value}
    with (
        _server() as server,
        _client(server) as client,
        pytest.raises(openai.BadRequestError) as info,
    ):
        client.post("/chat/completions", body=body, cast_to=object)
    error = info.value.body
    assert isinstance(error, dict)
    assert message in error["message"]
    assert error["param"] == field and error["code"] == "invalid_type"


def test_stream_yes_is_refused_on_the_responses_route() -> None:
    with (
        _server() as server,
        _client(server) as client,
        pytest.raises(openai.BadRequestError, match="'stream': expected a boolean"),
    ):
        client.post(
            "/responses", body={"model": "m", "input": "hi", "stream": "yes"}, cast_to=object
        )


def test_idle_connections_beyond_the_bound_give_their_slots_up() -> None:
    """Two idle connections hold both slots; a third client waits until they have idled
    EVICT_AFTER, takes a slot and is served (a busy slot is never taken: see
    test_wire_slow_clients.py for the 503)."""
    with _server(max_connections=2) as server:
        idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(2)]
        try:
            time.sleep(0.2)  # both accepted and parked in their handler threads
            body = json.dumps({"model": "m", "messages": USER}).encode()
            head = _post(str(len(body))).replace("\r\n\r\n", "\r\nconnection: close\r\n\r\n")
            started = time.monotonic()
            status = _split(_raw(server, head, body))[0]
            waited = time.monotonic() - started
            closed = []
            for sock in idle:  # the server shut the one that waited longest
                sock.settimeout(0.5)
                try:
                    closed.append(sock.recv(1))
                except TimeoutError:
                    closed.append(None)  # still open
        finally:
            for sock in idle:
                sock.close()
        assert status == 200
        assert waited >= 0.7  # EVICT_AFTER (1 s) counted from their start, 0.2 s before
        assert sorted(closed, key=str) == [None, b""]
        assert threading.active_count() < 50


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "8"])
def test_limits_are_validated(bad: Any) -> None:
    with pytest.raises(UsageError, match="max_body_bytes must be an int >= 1"):
        _server(max_body_bytes=bad)
    with pytest.raises(UsageError, match="max_connections must be an int >= 1"):
        _server(max_connections=bad)


def test_a_tool_schema_too_deep_to_validate_is_a_400() -> None:
    from harness.models._wire._app import WireApp

    schema: dict[str, Any] = {"type": "object"}
    for _ in range(300):
        schema = {"type": "object", "properties": {"a": schema}}
    chat_tool = {"type": "function", "function": {"name": "f", "parameters": schema}}
    flat_tool = {"type": "function", "name": "f", "parameters": schema}
    bodies = {
        PATH: {"model": "m", "messages": USER, "tools": [chat_tool]},
        "/v1/responses": {"model": "m", "input": "hi", "tools": [flat_tool]},
    }
    app = WireApp(ScriptedModel([reply("ok")]))
    for path, body in bodies.items():
        answer = app.handle("POST", path, json.dumps(body).encode())
        assert answer.status == 400, answer.body[:200]
        assert b"nested too deeply to validate" in answer.body
