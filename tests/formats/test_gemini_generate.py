"""The Gemini ``generateContent`` format, both sides: each piece both ways (camelCase and
snake_case, OpenAPI schemas with enums as integers, the tool choice table), the API's
checks, responses JSON and streamed (SSE and a JSON array), and the properties: encode ->
decode is the identity on the neutral model, and the fake accepts every request
``GeminiModel`` builds for generated tool loops."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from format_strategies import _ARGUMENTS, _NAMES, _TEXT, histories
from hypothesis import HealthCheck, given, settings, strategies as st

from harness._errors import MalformedResponse, UsageError
from harness.formats import IdSource, WireError, codec_for, gemini_generate as gemini
from harness.formats.gemini_generate._request import read_request
from harness.loop import Model, ModelRequest, ModelResponse, ModelSettings, Usage
from harness.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage
from harness.tools import ToolChoice, ToolDefinition

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- pieces, both ways ----------------------------------------------------------------------


def test_a_declaration_with_an_openapi_schema_reads_as_json_schema_and_goes_back_as_it_came() -> (
    None
):
    entry = {
        "name": "get_current_weather",
        "description": "Weather.",
        "parameters": {
            "type": 6,
            "properties": {
                "location": {"type": 1, "description": "City."},
                "unit": {"type": "STRING", "enum": ["c", "f"], "nullable": True},
                "days": {"type": "ARRAY", "items": {"type": 3}, "max_items": 3},
            },
            "required": ["location"],
            "propertyOrdering": ["location", "unit", "days"],
        },
    }
    tool = gemini.tool_from_param(entry)
    assert tool.parameters == {
        "type": "object",
        "required": ["location"],
        "properties": {
            "location": {"type": "string", "description": "City."},
            "unit": {"type": ["string", "null"], "enum": ["c", "f"]},
            "days": {"type": "array", "maxItems": 3, "items": {"type": "integer"}},
        },
    }
    assert gemini.tool_param(tool) == entry


def test_a_declaration_with_json_schema_in_either_case() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    for key in ("parametersJsonSchema", "parameters_json_schema"):
        tool = gemini.tool_from_param({"name": "f", key: schema})
        assert tool.parameters == schema and not tool.provider_extra
        assert gemini.tool_param(tool) == {"name": "f", "parametersJsonSchema": schema}


def test_what_gemini_cannot_send_is_refused_not_dropped() -> None:
    with pytest.raises(UsageError, match="namespace"):
        gemini.tool_param(ToolDefinition(name="f", namespace="crm"))
    with pytest.raises(UsageError, match="tool search"):
        gemini.tool_param(ToolDefinition(name="s", search="bm25"))


CHOICES = [
    (ToolChoice.auto(), {"mode": "AUTO"}),
    (ToolChoice.none(), {"mode": "NONE"}),
    (ToolChoice.required(), {"mode": "ANY"}),
    (ToolChoice.tool("f"), {"mode": "ANY", "allowedFunctionNames": ["f"]}),
    (
        ToolChoice.allowed_tools(["f", "g"], mode="required"),
        {"mode": "ANY", "allowedFunctionNames": ["f", "g"]},
    ),
    (
        ToolChoice.allowed_tools(["f", "g"], mode="auto"),
        {"mode": "VALIDATED", "allowedFunctionNames": ["f", "g"]},
    ),
]


@pytest.mark.parametrize(("choice", "config"), CHOICES)
def test_the_tool_choice_table_both_ways(choice: ToolChoice, config: dict[str, Any]) -> None:
    assert gemini.tool_choice_param(choice) == {"functionCallingConfig": config}
    assert gemini.tool_choice_from_param({"functionCallingConfig": config}) == choice
    snake = {"function_calling_config": {"mode": config["mode"]}}
    if "allowedFunctionNames" in config:
        snake["function_calling_config"]["allowed_function_names"] = config["allowedFunctionNames"]
    assert gemini.tool_choice_from_param(snake) == choice


def test_choice_modes_as_numbers_and_the_ones_without_a_neutral_form() -> None:
    assert gemini.tool_choice_from_param({"functionCallingConfig": {"mode": 2}}) == (
        ToolChoice.required()
    )
    validated = gemini.tool_choice_from_param({"functionCallingConfig": {"mode": "VALIDATED"}})
    assert validated is not None and validated.provider_extra == {
        "gemini-generate": {"mode": "VALIDATED"}
    }
    assert gemini.tool_choice_param(validated) == {"functionCallingConfig": {"mode": "VALIDATED"}}


def test_parts_in_snake_case_without_roles_or_ids_pair_by_name_in_order() -> None:
    body = {
        "contents": [
            {"parts": [{"text": "weather?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "thinking", "thought": True},
                    {"function_call": {"name": "w", "args": {"city": "A"}}},
                    {"function_call": {"name": "w", "args": {"city": "B"}}},
                    {"functionCall": {"name": "t", "args": {}, "id": "given"}},
                ],
            },
            {
                "parts": [
                    {
                        "function_response": {
                            "name": "t",
                            "id": "given",
                            "response": {"output": "9"},
                        }
                    },
                    {"function_response": {"name": "w", "response": {"output": "1"}}},
                    {"functionResponse": {"name": "w", "response": {"error": "down"}}},
                ]
            },
        ],
        "system_instruction": {"parts": [{"text": "be brief"}]},
    }
    request = read_request(body)
    system, user, model, *results = request.messages
    assert system == SystemMessage(content="be brief") and user.content == "weather?"
    assert isinstance(model, AssistantMessage) and model.content is None  # the thought is not text
    first, second, third = model.tool_calls
    assert first.id.startswith(gemini.SYNTHETIC_ID_PREFIX) and first.id != second.id
    assert third.id == "given"
    assert [(r.tool_call_id, r.content, r.is_error) for r in results] == [
        ("given", "9", False),
        (first.id, "1", False),
        (second.id, "down", True),
    ]
    answer = {"candidates": [{"content": {"role": "model", "parts": body["contents"][1]["parts"]}}]}
    assert gemini.response_from_body(answer).message.tool_calls == model.tool_calls  # same ids


def test_a_synthetic_id_is_never_sent_and_results_are_objects() -> None:
    call = ToolCall(id=gemini.call_id("w", {}, 0), name="w")
    request = ModelRequest(
        messages=[
            AssistantMessage(tool_calls=(call, ToolCall(id="real", name="w"))),
            ToolMessage(tool_call_id=call.id, content="1"),
            ToolMessage(tool_call_id="real", content="oops", is_error=True),
        ],
        tools=[ToolDefinition(name="w")],
        tool_names=("w",),
        settings=ModelSettings(),
        iteration=2,
    )
    contents = gemini.request_body(request, model="m")["contents"]
    assert contents[0]["parts"] == [
        {"functionCall": {"name": "w", "args": {}}},
        {"functionCall": {"name": "w", "args": {}, "id": "real"}},
    ]
    assert contents[1]["parts"] == [
        {"functionResponse": {"name": "w", "response": {"output": "1"}}},
        {"functionResponse": {"name": "w", "response": {"error": "oops"}, "id": "real"}},
    ]


def test_hosted_tools_travel_beside_the_declarations() -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"googleSearch": {}}, {"functionDeclarations": [{"name": "f"}]}],
    }
    request = read_request(body)
    assert request.tool_names == ("f",)
    assert request.settings.extra == {"tools": [{"googleSearch": {}}]}
    again = gemini.request_body(request, model="m")
    assert again["tools"] == [
        {
            "functionDeclarations": [
                {"name": "f", "parametersJsonSchema": {"type": "object", "properties": {}}}
            ]
        },
        {"googleSearch": {}},
    ]


@pytest.mark.parametrize(
    ("path", "route"),
    [
        (
            "/v1beta/models/gemini-2.5-flash:generateContent",
            ("gemini-2.5-flash", False, False, False),
        ),
        ("/v1beta/models/g:streamGenerateContent?alt=sse", ("g", True, True, False)),
        ("/v1beta/models/g:streamGenerateContent", ("g", True, False, False)),
        (
            "/v1/projects/p/locations/us-central1/publishers/google/models/g:streamGenerateContent"
            "?%24alt=json%3Benum-encoding%3Dint",
            ("g", True, False, True),
        ),
        ("/v1beta1/publishers/google/models/g:generateContent", ("g", False, False, True)),
        ("/v1beta/tunedModels/abc:generateContent", ("tunedModels/abc", False, False, False)),
    ],
)
def test_routes(path: str, route: tuple[str, bool, bool, bool]) -> None:
    got = gemini.route_of(path)
    assert got is not None and (got.model, got.stream, got.sse, got.vertex) == route
    assert codec_for("POST", path) is gemini.CODEC
    assert gemini.CODEC.model_of(path) == route[0]


@pytest.mark.parametrize(
    "path", ["/v1/chat/completions", "/v1beta/models/g:countTokens", "/v1beta/models"]
)
def test_other_paths_are_not_gemini(path: str) -> None:
    assert gemini.route_of(path) is None
    assert codec_for("POST", path) is not gemini.CODEC


# -- responses ---------------------------------------------------------------------------


def test_a_response_with_enums_as_numbers_usage_and_a_block() -> None:
    answer = {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "hi"}]}, "finishReason": 2}
        ],
        "usageMetadata": {
            "promptTokenCount": 100,
            "cachedContentTokenCount": 60,
            "candidatesTokenCount": 5,
            "thoughtsTokenCount": 7,
            "toolUsePromptTokenCount": 3,
        },
        "modelVersion": "gemini-x",
    }
    response = gemini.response_from_body(answer)
    assert response.finish_reason == "length" and response.model_name == "gemini-x"
    assert response.usage == Usage(
        input_tokens=103, output_tokens=12, total_tokens=115, cache_read_tokens=60
    )
    blocked = gemini.response_from_body({"promptFeedback": {"blockReason": "SAFETY"}})
    assert blocked.finish_reason == "content_filter" and blocked.message.refusal
    with pytest.raises(MalformedResponse, match=r"usageMetadata\.promptTokenCount"):
        gemini.response_from_body({"candidates": [], "usageMetadata": {"promptTokenCount": -1}})


def test_an_error_body_and_its_details() -> None:
    body = {
        "error": {"code": 400, "message": "Please use a valid role", "status": "INVALID_ARGUMENT"}
    }
    assert gemini.error_details(body) == ("INVALID_ARGUMENT", "Please use a valid role")
    assert gemini.error_details([body]) == ("INVALID_ARGUMENT", "Please use a valid role")
    error = gemini.error_for(WireError(429, "slow"))
    assert json.loads(error.body()) == {
        "error": {"code": 429, "message": "slow", "status": "RESOURCE_EXHAUSTED"}
    }


# -- properties ------------------------------------------------------------------------------


@st.composite
def requests(draw: st.DrawFn) -> ModelRequest:
    """A request the loop could build, with what Gemini carries."""
    names = tuple(draw(st.lists(_NAMES, min_size=1, max_size=4, unique=True)))
    messages = draw(histories(tool_names=names))
    tools = [
        ToolDefinition(
            name=n,
            description=draw(st.none() | _TEXT),
            parameters={
                "type": "object",
                "properties": draw(
                    st.dictionaries(
                        st.from_regex(r"[a-z]{1,6}", fullmatch=True),
                        st.sampled_from([{"type": "string"}, {"type": "integer"}]),
                        max_size=3,
                    )
                ),
            },
        )
        for n in names
    ]
    choice = draw(
        st.none()
        | st.sampled_from([ToolChoice.auto(), ToolChoice.none(), ToolChoice.required()])
        | st.sampled_from(names).map(ToolChoice.tool)
        | st.tuples(
            st.lists(st.sampled_from(names), min_size=1, unique=True),
            st.sampled_from(["auto", "required"]),
        ).map(
            lambda a: ToolChoice.allowed_tools(a[0], mode=a[1])  # type: ignore[arg-type]
        )
    )
    return ModelRequest(
        messages=messages,
        tools=tools,
        tool_names=names,
        settings=ModelSettings(tool_choice=choice),
        iteration=1 + sum(isinstance(m, AssistantMessage) for m in messages),
    )


def carried(request: ModelRequest) -> ModelRequest:
    """``request`` as Gemini gives it back: a tool result's name is the call's (not kept),
    and a one-name required subset is that tool."""
    messages: list[Message] = [
        m.model_copy(update={"name": None}) if isinstance(m, ToolMessage) else m
        for m in request.messages
    ]
    choice = request.settings.tool_choice
    if (
        choice is not None
        and choice.allowed is not None
        and len(choice.allowed) == 1
        and choice.mode == "required"
    ):
        choice = ToolChoice.tool(choice.allowed[0])
    return dataclasses.replace(
        request,
        messages=messages,
        settings=ModelSettings(tool_choice=choice),
        tools=tuple(request.tools),
    )


@SETTINGS
@given(request=requests())
def test_a_request_body_reads_back_to_the_request(request: ModelRequest) -> None:
    body = json.loads(json.dumps(gemini.request_body(request, model="m-1")))
    back = gemini.request_from_body(body)  # the fake's reading, with the API's checks
    assert back.model == "m-1" and back.stream is False
    assert back.request == carried(request)
    parsed = gemini.CODEC.parse_request(gemini.http_body(body))  # a recording of it
    assert list(parsed.messages) == list(back.request.messages)
    assert list(parsed.tools) == list(back.request.tools)
    assert parsed.tool_choice == back.request.settings.tool_choice
    assert [p.text for p in gemini.prompt_pieces(body)] == [
        p.text
        for p in [
            *gemini.prompt_tools(request.tools),
            *(
                p
                for m in request.messages
                for p in gemini.prompt_message(m)
                if p.section == "system"
            ),
            *gemini.prompt_choice(request.settings, request.tools),
            *(
                p
                for m in request.messages
                for p in gemini.prompt_message(m)
                if p.section != "system"
            ),
        ]
    ]


@st.composite
def responses(draw: st.DrawFn) -> ModelResponse:
    calls = tuple(
        ToolCall(id=f"call_{i}", name=draw(_NAMES), arguments=draw(_ARGUMENTS))
        for i in range(draw(st.integers(0, 3)))
    )
    content = draw(st.none() | _TEXT) if calls else draw(_TEXT)
    finish = "tool_calls" if calls else draw(st.sampled_from(["stop", "length"]))
    inputs, outputs = draw(st.integers(0, 500)), draw(st.integers(0, 500))
    cached = draw(st.integers(0, inputs))
    return ModelResponse(
        message=AssistantMessage(content=content, tool_calls=calls),
        finish_reason=finish,
        usage=Usage(
            input_tokens=inputs,
            output_tokens=outputs,
            total_tokens=inputs + outputs,
            cache_read_tokens=cached,
        ),
        model_name="served-model",
    )


@SETTINGS
@given(response=responses(), max_chunks=st.integers(1, 64), sse=st.booleans())
def test_what_the_fake_serves_reads_back_to_the_answer(
    response: ModelResponse, max_chunks: int, sse: bool
) -> None:
    wire = gemini.request_from_body(
        {"model": "served-model", "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    )
    body = json.loads(json.dumps(gemini.response_body(wire, response, IdSource())))
    assert gemini.response_from_body(body) == response
    events = gemini.response_events(wire, response, IdSource(), max_chunks=max_chunks)
    assert gemini.response_from_events([json.loads(json.dumps(d)) for _, d in events]) == response
    path = "/v1beta/models/served-model:streamGenerateContent" + ("?alt=sse" if sse else "")
    content_type, frames = gemini.stream_frames(events, gemini.route_of(path))
    raw = b"".join(frames)
    assert gemini.CODEC.decode_response(200, {"content-type": content_type}, raw) == response
    assert gemini.CODEC.decode_response(200, {}, raw) == response  # a recording without headers


class _Complying(Model):
    """Answers as the request's tool choice allows: a call when one is required."""

    __test__ = False
    name = "complying"

    def request(self, request: ModelRequest) -> ModelResponse:
        choice = request.settings.tool_choice
        must = choice is not None and (choice.mode in ("required", "tool"))
        if not must:
            return ModelResponse(message=AssistantMessage(content="ok"))
        name = choice.name or (choice.allowed or request.tool_names)[0]  # type: ignore[union-attr]
        call = ToolCall(id="call_x", name=name, arguments="{}")
        return ModelResponse(
            message=AssistantMessage(tool_calls=(call,)), finish_reason="tool_calls"
        )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=requests(), stream=st.booleans())
def test_the_fake_accepts_every_request_the_adapter_builds(
    request: ModelRequest, stream: bool
) -> None:
    from harness.models import GeminiModel, OpenAIWireTransport, fake_gemini_client

    transport = OpenAIWireTransport(_Complying())
    model = GeminiModel(fake_gemini_client(transport), stream=stream)
    answer = model.request(request)  # a refusal would raise the API's 400
    assert transport.app.responses[-1] is not None
    assert answer.message == transport.app.responses[-1].message
    served = transport.app.model  # type: ignore[attr-defined]
    assert isinstance(served, _Complying)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"contents": []}, "contents is not specified"),
        ({"contents": [{"role": "bot", "parts": [{"text": "x"}]}]}, "valid role: user, model"),
        ({"contents": [{"role": "user", "parts": []}]}, "parts must not be empty"),
        ({"contents": [{"role": "user", "parts": [{"thought": True}]}]}, "oneof field 'data'"),
        (
            {
                "contents": [{"parts": [{"text": "x"}]}],
                "tools": [{"functionDeclarations": [{"name": "f"}, {"name": "f"}]}],
            },
            "Duplicate function declaration found: f",
        ),
        (
            {
                "contents": [{"parts": [{"text": "x"}]}],
                "toolConfig": {"functionCallingConfig": {"mode": "ALWAYS"}},
                "tools": [{"functionDeclarations": [{"name": "f"}]}],
            },
            "FunctionCallingConfig.Mode",
        ),
        (
            {
                "contents": [{"parts": [{"text": "x"}]}],
                "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
            },
            "without function_declarations",
        ),
        (
            {
                "contents": [
                    {"parts": [{"text": "x"}]},
                    {"parts": [{"functionResponse": {"name": "f", "response": {}}}]},
                ],
                "tools": [{"functionDeclarations": [{"name": "f"}]}],
            },
            "function response turn comes immediately after a function call turn",
        ),
    ],
)
def test_the_apis_400s(body: dict[str, Any], message: str) -> None:
    with pytest.raises(gemini.GeminiWireError, match=message) as info:
        gemini.request_from_body(body)
    assert info.value.status == 400
    assert json.loads(info.value.body())["error"]["status"] == "INVALID_ARGUMENT"


def test_another_providers_tool_choice_is_not_a_calling_config() -> None:
    """A dict without ``mode`` or ``allowedFunctionNames`` is not Gemini's: ``None``, so a
    scenario file's provider dict is read by the format that spells it that way."""
    assert gemini.tool_choice_from_param({"type": "sometimes"}) is None
    assert gemini.tool_choice_from_param({"functionCallingConfig": {}}) is None
    assert gemini.tool_choice_from_param({"mode": "NONE"}) == ToolChoice.none()
