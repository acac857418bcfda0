"""Real recorded OpenAI traffic (``cassettes/real``, and ``$HARNESS_CORPUS`` or
../shared/corpus) parses like the SDK parses it.

For every recorded response, our parsing functions applied to the raw body give
the same harness ``ModelResponse`` as the adapter gives when the real SDK reads
that body from a replaying transport (gzip, scalar headers, SSE with ``event:``
lines and usage-only chunks included). The recorded *requests* pass the fake
server's validation, so it accepts what the real SDK sends.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
import yaml
from openai._streaming import SSEDecoder
from wire_helpers import model_request

from harness.formats.openai_chat import (
    request_from_body as parse_chat_request,
    response_from_body as chat_response_from_completion,
    response_from_events as chat_response_from_chunks,
)
from harness.formats.openai_responses import (
    request_from_body as parse_responses_request,
    response_from_body as responses_response_from_response,
    response_from_events as responses_response_from_events,
)
from harness.loop import ModelResponse
from harness.models import (
    OpenAIChatModel,
    OpenAIResponsesModel,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cassettes"))
from corpus import SKIP_REASON, ids, recordings

from harness.formats._native_rules import added_names

PATHS = recordings("openai", "pydantic_ai_variant")
FILES = ids(PATHS)
pytestmark = pytest.mark.skipif(not PATHS, reason=SKIP_REASON)


def _interactions(name: str) -> list[dict[str, Any]]:
    """The file's OpenAI interactions (a conversation may go on at another provider: a
    fallback's Anthropic requests are tested with the Anthropic recordings' tests)."""
    path = PATHS[FILES.index(name)]
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.Loader)
    return [
        i
        for i in data["interactions"]
        if i["request"]["uri"].split("?")[0].endswith(("/chat/completions", "/responses"))
    ]


def _status(response: dict[str, Any]) -> int:
    if "status_code" in response:  # vcrpy 4's httpx stubs
        return int(response["status_code"])
    return int(response["status"]["code"])


def _headers(raw: dict[str, Any]) -> dict[str, str]:
    """Header names in any case, values as lists or scalars -> one lower-cased dict."""
    out = {}
    for key, value in raw.items():
        out[key.lower()] = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return out


def _body(part: dict[str, Any]) -> bytes:
    if "parsed_body" in part:
        return json.dumps(part["parsed_body"]).encode()
    if "content" in part and "body" not in part:  # vcrpy 4's httpx stubs: stored decoded
        return str(part["content"]).encode()
    body = part.get("body")
    data = body.get("string", b"") if isinstance(body, dict) else body or b""
    return data if isinstance(data, bytes) else str(data).encode()


def _decoded(response: dict[str, Any]) -> bytes:
    raw = _body(response)
    encoded = _headers(response.get("headers", {})).get("content-encoding") == "gzip"
    if encoded and "content" not in response:
        return gzip.decompress(raw)
    return raw


def _direct(uri: str, response: dict[str, Any]) -> ModelResponse:
    """Our parsing functions on the raw recorded body."""
    text = _decoded(response)
    is_chat = uri.endswith("/chat/completions")
    content_type = _headers(response["headers"]).get("content-type", "")
    # some recordings kept no headers: a streamed body is known by its content then
    if content_type.startswith("text/event-stream") or text.lstrip().startswith(b"data:"):
        events = [
            json.loads(sse.data)
            for sse in SSEDecoder().iter_bytes(iter([text]))
            if sse.data and sse.data != "[DONE]"
        ]
        if is_chat:
            return chat_response_from_chunks(events)
        return responses_response_from_events(events)
    data = json.loads(text)
    return (
        chat_response_from_completion(data) if is_chat else responses_response_from_response(data)
    )


def _replaying_client(response: dict[str, Any]) -> openai.OpenAI:
    headers = _headers(response["headers"])
    headers.pop("content-length", None)  # some recordings were reformatted
    headers.pop("transfer-encoding", None)
    raw = _body(response)
    if "content" in response:  # stored decoded under the original Content-Encoding
        headers.pop("content-encoding", None)

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(_status(response), headers=headers, content=raw)

    return openai.OpenAI(
        base_url="https://api.openai.com/v1",
        api_key="sk-test",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )


def _through_sdk(uri: str, request_body: dict[str, Any], response: dict[str, Any]) -> ModelResponse:
    client = _replaying_client(response)
    model_id = request_body.get("model", "m")
    stream = bool(request_body.get("stream"))
    if uri.endswith("/chat/completions"):
        return OpenAIChatModel(client, model_id, stream=stream).request(model_request())
    return OpenAIResponsesModel(client, model_id, stream=stream).request(model_request())


def _request_body(request: dict[str, Any]) -> dict[str, Any]:
    return json.loads(_body(request))  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", FILES)
def test_recorded_responses_parse_like_the_sdk(name: str) -> None:
    interactions = _interactions(name)
    assert interactions
    for interaction in interactions:
        request, response = interaction["request"], interaction["response"]
        uri = request["uri"]
        direct = _direct(uri, response)
        via_sdk = _through_sdk(uri, _request_body(request), response)
        assert direct == via_sdk, f"{name}: {uri}"
        assert direct.model_name  # every recorded response names its model
        assert direct.message.content or direct.message.tool_calls


@pytest.mark.parametrize("name", FILES)
def test_recorded_requests_pass_the_fake_servers_validation(name: str) -> None:
    for interaction in _interactions(name):
        request = interaction["request"]
        body = _request_body(request)
        parse = (
            parse_chat_request
            if request["uri"].endswith("/chat/completions")
            else (parse_responses_request)
        )
        wire = parse(body)
        assert wire.model == body["model"]
        assert wire.stream == bool(body.get("stream"))
        entries = body.get("tools", [])
        declared = tuple(t.name for t in wire.request.tools)
        assert len(declared) == sum(  # a namespace's functions are declared one by one
            len(e["tools"]) if e.get("type") == "namespace" else 1 for e in entries
        )
        # offered: the declared tools, then those an additional_tools item adds
        added = tuple(n for n in added_names(wire.request.messages) if n not in declared)
        assert wire.request.tool_names == declared + added


def _facts_of(name: str) -> list[dict[str, Any]]:
    if name not in FILES:
        pytest.skip(f"{name} is not among the recordings (it is in the shared corpus)")
    return _interactions(name)


def test_known_facts_of_the_shared_recordings() -> None:
    stream = _facts_of("openai/chat_stream_tool_call_then_result.yaml")
    first = _direct(stream[0]["request"]["uri"], stream[0]["response"])
    assert [c.name for c in first.message.tool_calls] == ["multiply"]
    assert json.loads(first.message.tool_calls[0].arguments) == {"a": 1231, "b": 2331}
    assert first.finish_reason == "tool_calls"
    assert first.usage.total_tokens > 0  # from the usage-only last chunk
    parallel = _facts_of("openai/chat_parallel_tool_calls_with_results.yaml")
    calls = _direct(parallel[0]["request"]["uri"], parallel[0]["response"]).message.tool_calls
    assert len(calls) == 2
    gz = _facts_of("openai/responses_function_call_roundtrip_gzip.yaml")
    tool_turn = _direct(gz[0]["request"]["uri"], gz[0]["response"])
    assert tool_turn.finish_reason == "tool_calls"
    assert tool_turn.message.tool_calls[0].name == "multiply"
    answer = _direct(gz[1]["request"]["uri"], gz[1]["response"])
    assert answer.finish_reason == "stop" and answer.message.content


def test_known_facts_of_the_project_recordings() -> None:
    """The recordings shipped in cassettes/real: the decoded content of vcrpy 4's httpx
    variant, multi-member gzip bodies, a Responses function call."""
    student = _facts_of("openai/chat_tool_call_httpx_content_variant_ddtrace.yaml")
    (call,) = _direct(student[0]["request"]["uri"], student[0]["response"]).message.tool_calls
    assert call.name == "extract_student_info"
    assert json.loads(call.arguments)["clubs"] == ["Chess Club", "South Asian Student Association"]
    thrice = _facts_of("openai/chat_tool_result_replayed_thrice_gzip_openllmetry.yaml")
    answers = [_direct(i["request"]["uri"], i["response"]) for i in thrice]
    assert len(answers) == 3 and all(a.finish_reason == "stop" for a in answers)
    assert all("70" in (a.message.content or "") for a in answers)
    weather = _facts_of("openai/responses_function_call_gzip_ddtrace.yaml")
    turn = _direct(weather[0]["request"]["uri"], weather[0]["response"])
    assert [c.name for c in turn.message.tool_calls] == ["get_current_weather"]
    assert json.loads(turn.message.tool_calls[0].arguments) == {
        "location": "Boston, MA",
        "unit": "celsius",
    }
