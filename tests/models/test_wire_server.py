"""The loopback HTTP server: real sockets on 127.0.0.1, several clients, clean stop."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx2
import openai
import pytest
from wire_helpers import KINDS, TOOLS, Canned, model_request

from harness import ProviderError, ProviderTimeout, RateLimited, UsageError
from harness.models import OpenAIChatModel, ScriptedModel, WireServer, reply

USER = [{"role": "user", "content": "hi"}]


def _client(server: WireServer, **kw: object) -> openai.OpenAI:
    kw.setdefault("max_retries", 0)
    return openai.OpenAI(base_url=server.url, api_key="test", timeout=5, **kw)  # type: ignore[arg-type]


def test_serves_the_sdk_over_http_and_stops_cleanly() -> None:
    with WireServer(ScriptedModel([reply("hello over http")], name="fake")) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/v1")
        with _client(server) as client:
            assert [m.id for m in client.models.list().data] == ["fake"]
            completion = client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        port = server.port
    assert completion.choices[0].message.content == "hello over http"
    with pytest.raises(httpx2.ConnectError):
        httpx2.get(f"http://127.0.0.1:{port}/v1/models", timeout=1)
    server.stop()  # idempotent


def test_streaming_over_http() -> None:
    with (
        WireServer(Canned(KINDS["parallel_calls"])) as server,
        _client(server) as client,
        client.chat.completions.stream(model="m", messages=USER, tools=TOOLS) as stream,  # type: ignore[arg-type]
    ):
        final = stream.get_final_completion()
    calls = final.choices[0].message.tool_calls or []
    assert [c.function.name for c in calls] == ["get_weather", "get_time"]


def test_several_clients_at_once() -> None:
    clients, per_client = 8, 5
    model = Canned(KINDS["text"], repeat=True)
    with WireServer(model) as server:
        barrier = threading.Barrier(clients, timeout=10)

        def work(index: int) -> list[str | None]:
            with _client(server) as client:
                barrier.wait()  # all clients connect together
                return [
                    client.chat.completions.create(
                        model=f"m{index}",
                        messages=USER,  # type: ignore[arg-type]
                    ).model
                    for _ in range(per_client)
                ]

        with ThreadPoolExecutor(clients) as pool:
            results = list(pool.map(work, range(clients), timeout=30))
    assert results == [[f"m{i}"] * per_client for i in range(clients)]
    assert len(server.requests) == len(model.requests) == clients * per_client


def test_provider_errors_over_http() -> None:
    model = Canned(
        RateLimited("slow down", status=429, retry_after=0.01, code="rate_limit_exceeded"),
        KINDS["text"],
        RateLimited("again", status=429, retry_after=7),
    )
    with WireServer(model) as server:
        with _client(server, max_retries=1) as client:
            completion = client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
            assert completion.choices[0].message.content == KINDS["text"].message.content
        with _client(server) as client, pytest.raises(RateLimited) as info:
            OpenAIChatModel(client, "m").request(model_request())
    assert info.value.retry_after == 7.0
    assert [r.retry_count for r in server.requests] == [0, 1, 0]


def test_a_timeout_closes_the_connection() -> None:
    with (
        WireServer(Canned(ProviderTimeout("slow"))) as server,
        _client(server) as client,
        pytest.raises(ProviderError) as info,
    ):
        OpenAIChatModel(client, "m").request(model_request())
    assert info.value.code == "connection_error"
    assert info.value.retryable


def test_a_broken_model_is_a_500_and_is_kept() -> None:
    with WireServer(ScriptedModel([])) as server:
        answer = httpx2.post(
            f"{server.url}/chat/completions", json={"model": "m", "messages": USER}
        )
        assert answer.status_code == 500
        assert "script ran out" in answer.json()["error"]["message"]
        assert len(server.errors) == 1
        bad = httpx2.post(f"{server.url}/chat/completions", content=b"{", timeout=5)
        assert bad.status_code == 400


def test_serve_forever_stops_from_another_thread() -> None:
    server = WireServer(Canned(KINDS["text"])).bind()
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    answer = httpx2.get(f"{server.url}/models", timeout=5)
    assert answer.status_code == 200
    server.stop()
    thread.join(timeout=5)
    assert not thread.is_alive()


def test_only_loopback_and_valid_ports() -> None:
    with pytest.raises(UsageError, match="only binds to loopback"):
        WireServer(Canned(), host="0.0.0.0")
    with pytest.raises(UsageError, match="port must be"):
        WireServer(Canned(), port=70000)
    for port in (True, False, -1, 8.0, "8080"):  # True was port 1
        with pytest.raises(UsageError, match=rf"port must be .*got {port!r}"):
            WireServer(Canned(), port=port)  # type: ignore[arg-type]
    server = WireServer(Canned())
    with pytest.raises(UsageError, match="not bound yet"):
        _ = server.url
    assert server.errors == []
    server.stop()  # never started: nothing to do
