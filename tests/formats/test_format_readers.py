"""The fake's readers remember the last accepted body: the same tools are read and checked
once, and anything else is read afresh, with the same answers and errors."""

from __future__ import annotations

from typing import Any

import pytest

from harness.formats import WireError, openai_chat, openai_responses

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
CHAT_TOOL = {"type": "function", "function": {"name": "weather", "parameters": SCHEMA}}
RESPONSES_TOOL = {"type": "function", "name": "weather", "parameters": SCHEMA}
CASES: dict[str, tuple[Any, str, Any, Any]] = {
    "openai-chat": (openai_chat, "messages", CHAT_TOOL, {"type": "function", "function": {}}),
    "openai-responses": (openai_responses, "input", RESPONSES_TOOL, {"type": "function"}),
}


def _body(key: str, tools: list[Any], turns: int = 1) -> dict[str, Any]:
    history = [{"role": "user", "content": f"q{i}"} for i in range(turns)]
    return {"model": "m", key: history, "tools": tools}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_same_tools_are_read_once(name: str) -> None:
    fmt, key, tool, _ = CASES[name]
    reader = fmt.RequestReader()
    first = reader.read(_body(key, [dict(tool)]))
    again = reader.read(_body(key, [dict(tool)], turns=2))  # equal tools, a new list
    assert again.request.tools is first.request.tools  # reused, not read again
    assert again.request.tools == fmt.request_from_body(_body(key, [tool])).request.tools


@pytest.mark.parametrize("name", sorted(CASES))
def test_other_tools_are_read_and_checked_afresh(name: str) -> None:
    fmt, key, tool, nameless = CASES[name]
    reader = fmt.RequestReader()
    reader.read(_body(key, [tool]))
    other = (
        {**tool, "function": {**tool["function"], "name": "time"}}
        if "function" in tool
        else {**tool, "name": "time"}
    )
    assert reader.read(_body(key, [tool, other])).request.tool_names == ("weather", "time")
    with pytest.raises(WireError) as info:
        reader.read(_body(key, [tool, nameless]))
    assert info.value.code == "missing_required_parameter"
    assert reader.read(_body(key, [other])).request.tool_names == ("time",)  # after a refusal
