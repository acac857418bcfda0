"""The fake server rejects what the real API rejects, with the real error shapes."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
import pytest
from wire_helpers import KINDS, RESPONSES_TOOLS, TOOLS, Canned

from harness.models import (
    FAKE_BASE_URL,
    OpenAIWireTransport,
    fake_openai_client,
)

USER = {"role": "user", "content": "hi"}


def _call(call_id: str = "call_1", name: str = "get_weather") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
        ],
    }


def _result(call_id: str = "call_1") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "9C"}


def _post(
    body: bytes | dict[str, Any], path: str = "/chat/completions", **kw: Any
) -> httpx2.Response:
    model = Canned(KINDS["text"], repeat=True)
    with httpx2.Client(transport=OpenAIWireTransport(model, **kw), base_url=FAKE_BASE_URL) as http:
        if isinstance(body, bytes):
            return http.post(path, content=body, headers={"content-type": "application/json"})
        return http.post(path, json=body)


def _error(answer: httpx2.Response, status: int = 400) -> dict[str, Any]:
    assert answer.status_code == status
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"message", "type", "param", "code"}
    return body["error"]  # type: ignore[no-any-return]


def _bad_chat(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "m", "messages": [USER], "tools": TOOLS}
    body.update(changes)
    return body


def test_a_tool_message_answering_no_call_is_rejected() -> None:
    error = _error(_post(_bad_chat(messages=[USER, _result("call_x")])))
    assert error == {
        "message": "Invalid parameter: messages with role 'tool' must be a response to a "
        "preceeding message with 'tool_calls'.",
        "type": "invalid_request_error",
        "param": "messages.[1].role",
        "code": None,
    }


def test_unanswered_tool_calls_are_rejected_naming_the_ids() -> None:
    error = _error(_post(_bad_chat(messages=[USER, _call("call_1"), USER])))
    assert "The following tool_call_ids did not have response messages: call_1" in error["message"]
    assert error["param"] == "messages.[1].role"
    error = _error(_post(_bad_chat(messages=[USER, _call("call_9")])))  # at the end too
    assert error["message"].endswith("call_9")


def test_a_complete_tool_round_passes() -> None:
    assert _post(_bad_chat(messages=[USER, _call(), _result(), USER])).status_code == 200


@pytest.mark.parametrize(
    ("name", "code"),
    [("get weather", "invalid_value"), ("x" * 65, "string_above_max_length"), ("", None)],
)
def test_invalid_tool_names_are_rejected(name: str, code: str | None) -> None:
    tools = [TOOLS[0], {"type": "function", "function": {"name": name}}]
    error = _error(_post(_bad_chat(tools=tools)))
    assert error["param"] == "tools[1].function.name"
    assert error["code"] == (code or "missing_required_parameter")


def test_more_than_128_tools_are_rejected() -> None:
    tools = [{"type": "function", "function": {"name": f"t{i}"}} for i in range(129)]
    error = _error(_post(_bad_chat(tools=tools)))
    assert error["param"] == "tools"
    assert error["code"] == "array_above_max_length"
    assert "maximum length 128, but got an array with length 129" in error["message"]
    assert _post(_bad_chat(tools=tools[:128])).status_code == 200


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"city": {"type": "strng"}}},
        {"type": "string"},
        {"type": "object", "required": "city"},
        ["not", "an", "object"],
    ],
)
def test_invalid_json_schemas_are_rejected(schema: Any) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": schema}}]
    error = _error(_post(_bad_chat(tools=tools)))
    assert error["message"].startswith("Invalid schema for function 'f': ")
    assert error["param"] == "tools[0].function.parameters"
    assert error["code"] == "invalid_function_parameters"


def test_malformed_json_body() -> None:
    error = _error(_post(b'{"model": "m", "messages": ['))
    assert error["message"].startswith("We could not parse the JSON body of your request.")
    assert error["type"] == "invalid_request_error"
    assert _error(_post(b"[1, 2]"))["message"].startswith("We could not parse")


def test_missing_model_and_missing_messages() -> None:
    assert _error(_post({"messages": [USER]}))["message"] == "you must provide a model parameter"
    error = _error(_post({"model": "m"}))
    assert error["message"] == "Missing required parameter: 'messages'."
    assert error["code"] == "missing_required_parameter"
    assert _error(_post({"model": "m", "messages": []}))["code"] == "empty_array"


@pytest.mark.parametrize(
    ("messages", "param"),
    [
        ([{"role": "robot", "content": "x"}], "messages[0].role"),
        (["not a dict"], "messages[0]"),
        ([{"role": "user"}], "messages[0].content"),
        ([{"role": "user", "content": 5}], "messages[0].content"),
        ([{"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}], "messages[0]"),
    ],
)
def test_malformed_messages(messages: list[Any], param: str) -> None:
    assert _error(_post({"model": "m", "messages": messages}))["param"] == param


def test_unknown_path_and_method_are_404_like_the_api() -> None:
    error = _error(_post({"model": "m"}, path="/embeddings"), 404)
    assert error["message"] == "Invalid URL (POST /v1/embeddings)"
    model = Canned()
    with httpx2.Client(transport=OpenAIWireTransport(model), base_url=FAKE_BASE_URL) as http:
        answer = http.get("/chat/completions")
    assert _error(answer, 404)["message"] == "Invalid URL (GET /v1/chat/completions)"


def test_the_sdk_raises_its_own_bad_request_error() -> None:
    client = fake_openai_client(Canned(KINDS["text"]))
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(
            model="m",
            messages=[USER, _result("nope")],  # type: ignore[list-item]
        )
    assert info.value.status_code == 400
    assert info.value.param == "messages.[1].role"
    with pytest.raises(openai.NotFoundError):
        client.embeddings.create(model="m", input="x")


def test_strict_profile_rejects_history_calling_an_undeclared_tool() -> None:
    history = [USER, _call("call_1", "search_customer"), _result("call_1")]
    assert _post(_bad_chat(messages=history)).status_code == 200  # OpenAI allows it
    error = _error(_post(_bad_chat(messages=history), profile="strict"))
    assert error["code"] == "tool_not_declared"
    assert error["param"] == "messages[1].tool_calls[0].function.name"
    assert "search_customer" in error["message"]


def test_responses_validation() -> None:
    def responses(items: list[Any], **kw: Any) -> httpx2.Response:
        body = {"model": "m", "input": items, "tools": RESPONSES_TOOLS}
        return _post(body, path="/responses", **kw)

    call = {"type": "function_call", "call_id": "c1", "name": "gone", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "x"}
    orphan = _error(responses([USER, output]))
    assert orphan["message"] == "No tool call found for function call output with call_id c1."
    assert orphan["param"] == "input"
    assert (
        _error(responses([USER, call]))["message"] == "No tool output found for function call c1."
    )
    assert responses([USER, call, output]).status_code == 200
    assert _error(responses([USER, call, output], profile="strict"))["code"] == "tool_not_declared"
    bad_name = [{"type": "function", "name": "has space"}]
    error = _error(_post({"model": "m", "input": "hi", "tools": bad_name}, path="/responses"))
    assert error["param"] == "tools[0].name"
    assert _error(_post({"model": "m"}, path="/responses"))["param"] == "input"
    assert _error(responses([{"type": "web_search_call"}]))["param"] == "input[0].type"
    assert _error(responses([{"role": "robot", "content": "x"}]))["param"] == "input[0].role"
    assert _error(responses(["nope"]))["param"] == "input[0]"
    not_a_list = _post({"model": "m", "input": "hi", "tools": {"x": 1}}, path="/responses")
    assert _error(not_a_list)["param"] == "tools"


def test_nothing_is_lost_a_rejected_request_is_still_recorded() -> None:
    transport = OpenAIWireTransport(Canned(KINDS["text"]))
    with httpx2.Client(transport=transport, base_url=FAKE_BASE_URL) as http:
        http.post("/chat/completions", content=b"{oops")
    assert [r.path for r in transport.requests] == ["/v1/chat/completions"]
    assert transport.requests[0].body is None
