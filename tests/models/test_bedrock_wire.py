"""The Bedrock Converse wire fake, through boto3: in-process (botocore's ``before-send``
hook) and over loopback (``WireServer``). Bedrock's ``ValidationException``s for the
requests the API refuses, its error types for served provider errors, SigV4 headers
accepted and never kept, and every request the adapter builds for generated tool loops
accepted."""

from __future__ import annotations

import json
from typing import Any

import boto3
import botocore.config
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from wire_helpers import KINDS, Canned, model_request

from harness import ProviderError, ProviderTimeout, RateLimited, UsageError
from harness.formats import bedrock_converse as bc
from harness.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from harness.models import (
    BedrockConverseModel,
    BedrockWireHook,
    ScriptedModel,
    WireApp,
    WireServer,
    call,
    calls,
    fake_bedrock_client,
    reply,
)

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
WEATHER = {"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}
USER = {"role": "user", "content": [{"text": "weather?"}]}
USE = {
    "role": "assistant",
    "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {}}}],
}


def _result(call_id: str = "t1") -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": call_id, "content": [{"text": "sunny"}]}}],
    }


@pytest.fixture
def client() -> Any:
    return fake_bedrock_client(Canned(KINDS["text"], repeat=True))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"messages": [USER, USE, _result("t9")], "toolConfig": {"tools": [WEATHER]}},
            "Expected toolResult blocks at messages.2.content for the following Ids: t1",
        ),
        (
            {
                "messages": [
                    USER,
                    {"role": "assistant", "content": [{"text": "hi"}]},
                    _result("t9"),
                ],
                "toolConfig": {"tools": [WEATHER]},
            },
            "The number of toolResult blocks at messages.2.content exceeds the number of "
            "toolUse blocks of previous turn.",
        ),
        ({"messages": [USER, USE, _result()]}, bc.NO_TOOL_CONFIG),
        (
            {
                "messages": [USER],
                "toolConfig": {"tools": [WEATHER], "toolChoice": {"tool": {"name": "get_time"}}},
            },
            "The tool 'get_time' named in toolConfig.toolChoice is not defined",
        ),
        ({"messages": [USE]}, "A conversation must start with a user message"),
        ({"messages": [USER, USER]}, "must alternate between user and assistant roles"),
        (
            {"messages": [{"role": "user", "content": [{"text": "  "}]}]},
            "The text field in the ContentBlock object at messages.0.content.0 is blank",
        ),
    ],
    ids=[
        "unknown toolUseId",
        "stray result",
        "no toolConfig",
        "undeclared choice",
        "first turn",
        "roles",
        "blank",
    ],
)
def test_the_fake_refuses_like_bedrock(
    client: Any, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(client.exceptions.ValidationException) as info:
        client.converse(modelId=MODEL, **arguments)
    error = info.value.response
    assert error["Error"]["Code"] == "ValidationException"
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert message in error["Error"]["Message"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"tools": [], "toolChoice": {"any": {}}},
            "1 validation error detected: Value '[]' at 'toolConfig.tools' failed to satisfy "
            "constraint: Member must have length greater than or equal to 1",
        ),
        (
            {"toolChoice": {"auto": {}}},
            "1 validation error detected: Value 'null' at 'toolConfig.tools' failed to satisfy "
            "constraint: Member must not be null",
        ),
    ],
)
def test_a_tool_choice_with_no_tools_is_refused(config: dict[str, Any], message: str) -> None:
    """boto3 checks this before sending (a ``ParamValidationError``); a raw HTTP client
    gets Bedrock's answer from the fake."""
    app = WireApp(Canned(KINDS["text"]))
    body = json.dumps({"messages": [USER], "toolConfig": config}).encode()
    answer = app.handle("POST", f"/model/{MODEL}/converse", body, {})
    assert answer.status == 400
    assert answer.headers["x-amzn-ErrorType"].startswith("ValidationException:")
    assert json.loads(answer.body) == {"message": message}


def test_the_strict_profile_refuses_a_history_calling_an_undeclared_tool() -> None:
    arguments = {
        "messages": [USER, USE, _result()],
        "toolConfig": {"tools": [{"toolSpec": {"name": "other", "inputSchema": {"json": {}}}}]},
    }
    fake_bedrock_client(Canned(KINDS["text"])).converse(
        modelId=MODEL, **arguments
    )  # the API's own rules
    strict = fake_bedrock_client(Canned(KINDS["text"]), profile="strict")
    with pytest.raises(strict.exceptions.ValidationException, match="uses tool 'get_weather'"):
        strict.converse(modelId=MODEL, **arguments)


def test_the_adapter_sees_a_refusal_as_a_provider_error() -> None:
    model = BedrockConverseModel(fake_bedrock_client(Canned(KINDS["text"])), MODEL)
    broken = model_request(
        [
            UserMessage(content="q"),
            AssistantMessage(tool_calls=(ToolCall(id="t1", name="get_weather"),)),
            ToolMessage(tool_call_id="zz", content="r"),
        ]
    )
    with pytest.raises(ProviderError, match="Expected toolResult blocks") as info:
        model.request(broken)
    assert info.value.status == 400 and info.value.code == "ValidationException"
    assert info.value.retryable is False


@pytest.mark.parametrize(
    ("error", "status", "code", "cls"),
    [
        (
            RateLimited("slow down", status=429, retry_after=3),
            429,
            "ThrottlingException",
            RateLimited,
        ),
        (ProviderError("broken", status=500), 500, "InternalServerException", ProviderError),
        (ProviderError("busy", status=503), 503, "ServiceUnavailableException", ProviderError),
        (ProviderError("bad", status=400), 400, "ValidationException", ProviderError),
        (ProviderTimeout("late"), None, "timeout", ProviderTimeout),
    ],
)
def test_served_provider_errors_reach_the_adapter_typed(
    error: ProviderError, status: int | None, code: str | None, cls: type[ProviderError]
) -> None:
    model = BedrockConverseModel(fake_bedrock_client(Canned(error)), MODEL)
    with pytest.raises(cls) as info:
        model.request(model_request())
    assert info.value.status == status and info.value.code == code
    if status == 429:
        assert info.value.retry_after == 3 and info.value.retryable


def test_every_kind_of_answer_reads_back_streamed_and_not() -> None:
    for kind in ("text", "tool_call", "parallel_calls", "text_and_call", "length", "no_usage"):
        for stream in (False, True):
            served = Canned(KINDS[kind])
            got = BedrockConverseModel(fake_bedrock_client(served), MODEL, stream=stream).request(
                model_request()
            )
            assert got.message == KINDS[kind].message, (kind, stream)
            assert got.finish_reason == KINDS[kind].finish_reason
            assert got.usage == KINDS[kind].usage


def test_the_stream_is_event_stream_frames_on_the_wire() -> None:
    app = WireApp(Canned(KINDS["text_and_call"]))
    body = json.dumps({"messages": [USER], "toolConfig": {"tools": [WEATHER]}}).encode()
    reply_ = app.handle("POST", "/model/anthropic.claude%3A0/converse-stream", body, {})
    assert reply_.status == 200 and reply_.headers["content-type"] == bc.CONTENT_TYPE
    frames = bc.read_frames(reply_.body)  # botocore's parser, CRCs checked
    names = [name for _, name, _ in frames]
    assert names[0] == "messageStart" and names[-2:] == ["messageStop", "metadata"]
    assert names.count("contentBlockStart") == 1  # the tool use; text needs no start
    assert names.count("contentBlockStop") == 2
    assert {kind for kind, _, _ in frames} == {"event"}
    assert len(reply_.chunks) == len(frames)  # one frame per chunk, as Bedrock streams
    assert app.requests[0].path.endswith("/converse-stream")


def test_sigv4_headers_are_accepted_and_never_kept() -> None:
    served = ScriptedModel([reply("hi")])
    hook = BedrockWireHook(served)
    sent: list[dict[str, str]] = []
    client = fake_bedrock_client(
        hook, aws_session_token="FwoGZXIvYXdzEHarnessSessionToken0123456789"
    )
    client.meta.events.register(
        "before-send.bedrock-runtime",
        lambda request, **_: sent.append(dict(request.headers)) and None,
        unique_id="spy",
    )
    client.meta.events.unregister("before-send.bedrock-runtime", hook)
    client.meta.events.register("before-send.bedrock-runtime", hook)  # after the spy
    client.converse(modelId=MODEL, messages=[USER])
    headers = {k.lower(): (v.decode() if isinstance(v, bytes) else v) for k, v in sent[0].items()}
    assert headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=harness-fake-key/")
    assert "x-amz-security-token" in headers and "x-amz-date" in headers
    kept = repr(hook.requests)
    assert "AWS4-HMAC-SHA256" not in kept and "FwoGZXIvYXdz" not in kept
    assert not hasattr(hook.requests[0], "headers")


def test_loopback_server_serves_boto3_with_any_credentials() -> None:
    served = Canned(KINDS["tool_call"], KINDS["text"])
    with WireServer(served) as server:
        client = boto3.client(
            "bedrock-runtime",
            region_name="eu-west-3",
            endpoint_url=server.url.removesuffix("/v1"),
            aws_access_key_id="AKIAANYTHINGATALL000",
            aws_secret_access_key="any-secret-at-all-0123456789",
            config=botocore.config.Config(retries={"total_max_attempts": 1}),
        )
        model = BedrockConverseModel(client, "us.amazon.nova-micro-v1:0")
        assert model.request(model_request()).message == KINDS["tool_call"].message
        streamed = BedrockConverseModel(client, "us.amazon.nova-micro-v1:0", stream=True)
        assert streamed.request(model_request()).message == KINDS["text"].message
        client.close()
    paths = [r.path for r in server.requests]
    assert paths == [
        "/model/us.amazon.nova-micro-v1%3A0/converse",
        "/model/us.amazon.nova-micro-v1%3A0/converse-stream",
    ]


def test_the_fake_answers_a_path_it_does_not_serve_with_a_404(client: Any) -> None:
    with pytest.raises(client.exceptions.ClientError) as info:
        client.invoke_model(modelId=MODEL, body=b"{}")
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_the_adapter_takes_only_a_bedrock_runtime_client() -> None:
    s3 = boto3.client(
        "s3", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s"
    )
    with pytest.raises(
        UsageError, match="needs a boto3 'bedrock-runtime' client, got a boto3 's3'"
    ):
        BedrockConverseModel(s3, MODEL)
    with pytest.raises(UsageError, match="got str"):
        BedrockConverseModel("client", MODEL)


def test_defaults_the_service_does_not_know_are_a_usage_error() -> None:
    model = BedrockConverseModel(
        fake_bedrock_client(Canned(KINDS["text"])), MODEL, defaults={"temperature": 0}
    )
    with pytest.raises(UsageError, match="boto3 refused the Converse arguments"):
        model.request(model_request())


def test_credentials_never_reach_an_error_message() -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYHARNESSKEY"
    client = fake_bedrock_client(
        Canned(ProviderError(f"leaked {secret}", status=500)), aws_secret_access_key=secret
    )
    with pytest.raises(ProviderError) as info:
        BedrockConverseModel(client, MODEL).request(model_request())
    assert secret not in str(info.value)


# -- generated tool loops ----------------------------------------------------------------

NAMES = st.lists(
    st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=1, max_size=3, unique=True
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=NAMES, data=st.data(), stream=st.booleans())
def test_the_fake_accepts_every_request_the_adapter_builds(
    names: list[str], data: st.DataObject, stream: bool
) -> None:
    """Generated tool loops (parallel calls, error results from bad arguments, a tool
    choice): every request the adapter sends passes the fake's checks, and the served
    model is asked once per turn."""
    from harness import run
    from harness.tools import llm_tool

    rounds = data.draw(
        st.lists(st.lists(st.sampled_from(names), min_size=1, max_size=3), max_size=4)
    )
    steps = [
        calls(*(call(name, {"n": "bad"} if data.draw(st.booleans()) else {}) for name in batch))
        for batch in rounds
    ]
    served = ScriptedModel([*steps, reply("done")])
    app = WireApp(served)

    def make(name: str) -> Any:
        def tool(n: int = 0) -> str:
            return f"{name} {n}"

        tool.__name__ = name
        tool.__doc__ = f"The {name} tool."
        return llm_tool(tool)

    model = BedrockConverseModel(fake_bedrock_client(app), MODEL, stream=stream)
    choice = data.draw(st.sampled_from([None, "auto"]))
    result = run(model, "go", tools=[make(n) for n in names], tool_choice=choice)
    assert result.output == "done"
    assert len(app.requests) == len(rounds) + 1
    assert all(r is not None for r in app.responses)  # none refused
