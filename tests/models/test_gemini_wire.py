"""Gemini end to end: ``google-genai`` (sync, async, streamed, Gemini API and Vertex AI
paths) against the in-process fake and ``harness serve``'s loopback server, with the
API's checks and error shape; ``GeminiModel`` carries thought signatures back; the
seed scenario gives the same trace through every path as in process."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
from google import genai
from google.genai import errors, types

from harness import AllowedTools, EntityDiscovery, arun, llm_tool, run, tool_provider
from harness._errors import ProviderError, RateLimited
from harness.formats import gemini_generate
from harness.loop import ModelRequest, ModelSettings, Trace
from harness.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from harness.models import (
    GeminiModel,
    OpenAIWireTransport,
    ScriptedModel,
    WireApp,
    WireServer,
    call,
    expect_offered,
    fake_gemini_client,
    raise_error,
    reply,
)
from harness.tools import ToolDefinition


@tool_provider(prefix="customer")
class Customer:
    def __init__(self, id: str, spends: list[float]) -> None:
        self.id, self.spends = id, spends

    @llm_tool
    def get_average_spend(self) -> float:
        """Average order value."""
        return sum(self.spends) / len(self.spends)


@llm_tool
def search_customer(name: str) -> list[Customer]:
    """Find customers by name."""
    return [Customer("c-123", [10.0, 20.0])]


PROMPT = "What's John Smith's average spend?"


def _seed_script() -> ScriptedModel:
    return ScriptedModel(
        [
            call("search_customer", {"name": "John Smith"}),
            expect_offered(includes=["customer_c123_get_average_spend"]),
            call("customer_*_get_average_spend"),
            reply("John spends 15.0 on average."),
        ]
    )


def _shape(trace: Trace) -> list[tuple[Any, ...]]:
    return [
        (it.offered, tuple((c.name, c.arguments, c.content) for c in it.calls), it.injected)
        for it in trace
    ]


def _in_process() -> list[tuple[Any, ...]]:
    result = run(_seed_script(), PROMPT, tools=[search_customer], strategies=[EntityDiscovery()])
    return _shape(result.trace)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("vertexai", [False, True], ids=["gemini-api", "vertex"])
def test_the_seed_scenario_through_google_genai_has_the_in_process_trace(
    stream: bool, vertexai: bool
) -> None:
    transport = OpenAIWireTransport(_seed_script())
    model = GeminiModel(fake_gemini_client(transport, vertexai=vertexai), stream=stream)
    result = run(model, PROMPT, tools=[search_customer], strategies=[EntityDiscovery()])
    assert result.output == "John spends 15.0 on average."
    assert _shape(result.trace) == _in_process()
    paths = [r.path for r in transport.requests]
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    assert all(p.endswith(f"models/gemini-2.5-flash:{method}") for p in paths), paths
    assert all(("/publishers/google/" in p) is vertexai for p in paths)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_the_seed_scenario_through_the_async_client(stream: bool) -> None:
    transport = OpenAIWireTransport(_seed_script())
    model = GeminiModel(fake_gemini_client(transport), stream=stream)
    result = asyncio.run(
        arun(model, PROMPT, tools=[search_customer], strategies=[EntityDiscovery()])
    )
    assert _shape(result.trace) == _in_process()


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_the_seed_scenario_against_harness_serve(stream: bool) -> None:
    with WireServer(_seed_script()) as server:
        client = genai.Client(
            api_key="AIza" + "k" * 35,
            http_options=types.HttpOptions(
                base_url=server.url.removesuffix("/v1") + "/",
                retry_options=types.HttpRetryOptions(attempts=1),
            ),
        )
        model = GeminiModel(client, stream=stream)
        result = run(model, PROMPT, tools=[search_customer], strategies=[EntityDiscovery()])
        recorded = list(server.requests)
    assert _shape(result.trace) == _in_process()
    assert len(recorded) == 3 and all(":" in r.path for r in recorded)
    assert not any("AIza" in json.dumps(r.body) + r.path for r in recorded)


def test_a_key_in_the_query_is_never_recorded() -> None:
    app = WireApp(ScriptedModel([reply("hi")]))
    body = {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]}
    path = (
        "/v1beta/models/gemini-2.5-flash:generateContent?key=AIzaSecretSecretSecretSecret12345678"
    )
    reply_ = app.handle("POST", path, json.dumps(body).encode(), {"x-goog-api-key": "AIzaOther"})
    assert reply_.status == 200
    assert "AIza" not in app.requests[0].path
    assert app.requests[0].path.startswith("/v1beta/models/gemini-2.5-flash:generateContent")


def test_allowed_tools_sends_allowed_function_names_and_never_edits_tools() -> None:
    @llm_tool
    def lookup(order: str) -> str:
        """Look an order up."""
        return "open"

    @llm_tool
    def refund(order: str) -> str:
        """Refund an order."""
        return "refunded"

    transport = OpenAIWireTransport(
        ScriptedModel(
            [call("lookup", {"order": "A1"}), call("refund", {"order": "A1"}), reply("done")]
        )
    )
    model = GeminiModel(fake_gemini_client(transport))
    strategy = AllowedTools([["lookup"], ["refund"]], mode="required")
    result = run(model, "Refund A1", tools=[lookup, refund], strategies=[strategy])
    assert result.output == "done"
    bodies = [r.body for r in transport.requests]
    declared = [[d["name"] for d in b["tools"][0]["functionDeclarations"]] for b in bodies]
    assert declared == [["lookup", "refund"]] * 3  # tools never edited
    configs = [b.get("toolConfig", {}).get("functionCallingConfig") for b in bodies]
    assert configs[:2] == [
        {"mode": "ANY", "allowedFunctionNames": ["lookup"]},
        {"mode": "ANY", "allowedFunctionNames": ["refund"]},
    ]


# -- the API's checks and error shape ---------------------------------------------------

DECLARED = {"functionDeclarations": [{"name": "get_weather", "parametersJsonSchema": {}}]}
CALL = {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}
ANSWER = {"functionResponse": {"name": "get_weather", "response": {"output": "21C"}}}


def _post(app: WireApp, body: dict[str, Any], stream: str = "") -> tuple[int, Any]:
    method = "streamGenerateContent" + stream if stream else "generateContent"
    answer = app.handle("POST", f"/v1beta/models/gemini-x:{method}", json.dumps(body).encode())
    text = answer.body.decode()
    return answer.status, json.loads(text) if text.startswith(("{", "[")) else text


def _refusal(body: dict[str, Any]) -> str:
    status, answer = _post(WireApp(ScriptedModel([reply("hi")])), body)
    assert status == 400, answer
    assert answer["error"]["status"] == "INVALID_ARGUMENT" and answer["error"]["code"] == 400
    return str(answer["error"]["message"])


def _turns(*turns: tuple[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"role": role, "parts": parts} for role, parts in turns]


def test_function_responses_must_match_the_calls_one_for_one() -> None:
    two = {
        "contents": _turns(("user", [{"text": "hi"}]), ("model", [CALL, CALL]), ("user", [ANSWER])),
        "tools": [DECLARED],
    }
    assert "number of function response parts is equal" in _refusal(two)
    other = {**ANSWER["functionResponse"], "name": "get_time"}
    wrong = _turns(
        ("user", [{"text": "hi"}]), ("model", [CALL]), ("user", [{"functionResponse": other}])
    )
    assert "name the functions of the function call turn" in _refusal(
        {"contents": wrong, "tools": [DECLARED]}
    )
    fine = _turns(
        ("user", [{"text": "hi"}]), ("model", [CALL]), ({"role": None}["role"] or "user", [ANSWER])
    )
    assert (
        _post(WireApp(ScriptedModel([reply("hi")])), {"contents": fine, "tools": [DECLARED]})[0]
        == 200
    )


def test_a_call_to_an_undeclared_function_is_refused() -> None:
    contents = _turns(("user", [{"text": "hi"}]), ("model", [CALL]), ("user", [ANSWER]))
    message = _refusal(
        {"contents": contents, "tools": [{"functionDeclarations": [{"name": "other"}]}]}
    )
    assert "'get_weather' is called in the history but not declared" in message


def test_any_with_allowed_function_names_naming_an_undeclared_function_is_refused() -> None:
    config = {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["nope"]}}
    body = {
        "contents": _turns(("user", [{"text": "hi"}])),
        "tools": [DECLARED],
        "toolConfig": config,
    }
    assert "function 'nope' is not declared in tools" in _refusal(body)
    config = {"functionCallingConfig": {"mode": "AUTO", "allowedFunctionNames": ["get_weather"]}}
    body["toolConfig"] = config
    assert "only be set when the mode is ANY or VALIDATED" in _refusal(body)


def test_the_sdk_raises_the_apis_400_as_a_provider_error() -> None:
    """A history calling a function no request declares (the adapter's tool-history
    policy off): the fake answers the API's 400, the SDK raises it, the adapter maps it."""
    model = GeminiModel(fake_gemini_client(ScriptedModel([reply("never")])), tool_history="off")
    request = ModelRequest(
        messages=[
            UserMessage(content="hi"),
            AssistantMessage(tool_calls=(ToolCall(id="c1", name="get_weather"),)),
            ToolMessage(tool_call_id="c1", content="21C"),
        ],
        tools=[ToolDefinition(name="other")],
        tool_names=("other",),
        settings=ModelSettings(),
        iteration=2,
    )
    with pytest.raises(ProviderError) as info:
        model.request(request)
    assert info.value.status == 400 and info.value.code == "INVALID_ARGUMENT"
    assert "not declared" in str(info.value)


def test_a_served_rate_limit_reaches_the_client_in_googles_shape() -> None:
    model = GeminiModel(
        fake_gemini_client(ScriptedModel([raise_error("rate_limit", retry_after=3)]))
    )
    with pytest.raises(RateLimited) as info:
        run(model, "hi")
    assert info.value.status == 429 and info.value.code == "RESOURCE_EXHAUSTED"


def test_streamed_without_alt_sse_is_one_json_array() -> None:
    app = WireApp(ScriptedModel([reply("Hello there, friend")] * 2))
    body = {"contents": _turns(("user", [{"text": "hi"}]))}
    status, answer = _post(app, body, stream="")
    assert status == 200 and isinstance(answer, dict)
    reply_ = app.handle(
        "POST", "/v1beta/models/gemini-x:streamGenerateContent", json.dumps(body).encode()
    )
    assert reply_.headers["content-type"].startswith("application/json") and len(reply_.chunks) > 2
    chunks = json.loads(reply_.body)
    assert isinstance(chunks, list) and len(chunks) > 1
    assert gemini_generate.response_from_body(chunks).message.content == "Hello there, friend"


# -- thought signatures -------------------------------------------------------------------


def test_thought_signatures_go_back_unchanged_in_either_alphabet() -> None:
    transport = OpenAIWireTransport(
        ScriptedModel([call("search_customer", {"name": "John Smith"}), reply("ok")])
    )
    model = GeminiModel(fake_gemini_client(transport))
    run(model, PROMPT, tools=[search_customer])
    issued = gemini_generate.signature_for("search_customer", {"name": "John Smith"})
    sent_back = transport.requests[1].body["contents"][1]["parts"][0]["thoughtSignature"]
    assert gemini_generate.same_signature(sent_back, issued)
    body = dict(transport.requests[1].body)
    urlsafe = base64.urlsafe_b64encode(base64.b64decode(issued)).decode().rstrip("=")
    tampered = base64.b64encode(b"harness-thought:" + b"x" * 18).decode()
    for signature, status in ((urlsafe, 200), (tampered, 400)):
        part = {**body["contents"][1]["parts"][0], "thoughtSignature": signature}
        changed = {
            **body,
            "contents": [
                body["contents"][0],
                {"role": "model", "parts": [part]},
                body["contents"][2],
            ],
        }
        assert _post(WireApp(ScriptedModel([reply("ok")])), changed)[0] == status


def test_a_keyed_google_genai_error_never_shows_the_key() -> None:
    key = "AIza" + "Q" * 35
    client = fake_gemini_client(
        ScriptedModel([raise_error(status=500, message="boom")]), api_key=key
    )
    model = GeminiModel(client)
    with pytest.raises(ProviderError) as info:
        run(model, "hi")
    assert key not in str(info.value) and info.value.status == 500


def test_sdk_errors_map_to_the_harness_tree() -> None:
    from harness.models import map_gemini_error

    error = errors.ClientError(
        404, {"error": {"code": 404, "message": "no model", "status": "NOT_FOUND"}}
    )
    mapped = map_gemini_error(error)
    assert mapped.status == 404 and mapped.code == "NOT_FOUND" and mapped.retryable is False
    assert isinstance(
        map_gemini_error(errors.ServerError(503, {"error": {"status": "UNAVAILABLE"}})),
        ProviderError,
    )
    assert map_gemini_error(errors.ServerError(503, {"error": {"status": "UNAVAILABLE"}})).retryable


def test_only_a_google_genai_client_is_taken() -> None:
    from harness._errors import UsageError

    with pytest.raises(UsageError, match=r"google\.genai\.Client or google\.genai\.client"):
        GeminiModel(object())  # type: ignore[arg-type]


def test_a_model_playing_gemini_declares_the_adapters_capabilities() -> None:
    """A cassette model replaying a Gemini recording, or a scripted model standing for
    Gemini in a scenario, takes the allowed subset the adapter declares."""
    from harness.models import GEMINI_CAPABILITIES
    from harness.models._capabilities import format_capabilities

    assert format_capabilities("gemini-generate") is GEMINI_CAPABILITIES
    assert GEMINI_CAPABILITIES.allowed_tools and GEMINI_CAPABILITIES.tool_search == ()
    assert GEMINI_CAPABILITIES.tool_history == "tools_declared"
