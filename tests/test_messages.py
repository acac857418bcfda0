"""Messages: frozen models with an exact round-trip to and from Chat Completions message
dicts (``harness.formats.openai_chat``: ``message_to_dict`` / ``message_from_dict``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from pydantic import ValidationError

from harness import messages as messages_module
from harness._errors import UsageError
from harness.formats.openai_chat import (
    message_from_dict as from_openai,
    message_to_dict as to_openai,
    messages_from_dicts as messages_from_openai,
    messages_to_dicts as messages_to_openai,
)
from harness.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

CALL = ToolCall(id="call_1", name="search_customer", arguments='{"name": "John Smith"}')

# (message, the exact dict OpenAI's Chat Completions API uses for it)
CASES: list[tuple[Any, dict[str, Any]]] = [
    (SystemMessage(content="be brief"), {"role": "system", "content": "be brief"}),
    (UserMessage(content="hi"), {"role": "user", "content": "hi"}),
    (AssistantMessage(content="hello"), {"role": "assistant", "content": "hello"}),
    (
        AssistantMessage(tool_calls=(CALL,)),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "search_customer", "arguments": '{"name": "John Smith"}'},
                }
            ],
        },
    ),
    (
        AssistantMessage(
            content="looking",
            tool_calls=(CALL, ToolCall(id="call_2", name="b", arguments="not json")),
        ),
        {
            "role": "assistant",
            "content": "looking",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "search_customer", "arguments": '{"name": "John Smith"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "b", "arguments": "not json"},
                },
            ],
        },
    ),
    (
        AssistantMessage(refusal="I can't help with that"),
        {"role": "assistant", "content": None, "refusal": "I can't help with that"},
    ),
    (
        ToolMessage(tool_call_id="call_1", content='{"id": "c-123"}'),
        {"role": "tool", "tool_call_id": "call_1", "content": '{"id": "c-123"}'},
    ),
    (
        ToolMessage(tool_call_id="call_1", content="ok", name="search_customer"),
        {"role": "tool", "tool_call_id": "call_1", "content": "ok", "name": "search_customer"},
    ),
]
IDS = ["system", "user", "assistant-text", "assistant-call", "assistant-both", "refusal"]
IDS += ["tool", "tool-named"]


@pytest.mark.parametrize(("message", "wire"), CASES, ids=IDS)
def test_to_openai_gives_the_chat_completions_dict(message: Message, wire: dict[str, Any]) -> None:
    assert to_openai(message) == wire


@pytest.mark.parametrize(("message", "wire"), CASES, ids=IDS)
def test_round_trip_both_directions(message: Message, wire: dict[str, Any]) -> None:
    assert from_openai(wire) == message
    assert type(from_openai(wire)) is type(message)
    assert to_openai(from_openai(wire)) == wire
    assert from_openai(to_openai(message)) == message


def test_history_helpers_convert_in_order() -> None:
    history = [m for m, _ in CASES]
    wire = [w for _, w in CASES]
    assert messages_to_openai(history) == wire
    assert messages_from_openai(wire) == history


def test_messages_are_frozen() -> None:
    user = UserMessage(content="hi")
    with pytest.raises(ValidationError, match="frozen"):
        user.content = "changed"
    assistant = AssistantMessage(tool_calls=(CALL,))
    with pytest.raises(ValidationError, match="frozen"):
        assistant.tool_calls = ()
    with pytest.raises(ValidationError, match="frozen"):
        CALL.arguments = "{}"
    with pytest.raises(ValidationError, match="frozen"):
        ToolMessage(tool_call_id="x", content="y").content = "z"
    assert user.content == "hi"
    assert assistant.tool_calls == (CALL,)
    # frozen models are hashable and compare by value
    assert hash(UserMessage(content="hi")) == hash(user)


def test_unknown_fields_are_rejected_at_construction() -> None:
    with pytest.raises(ValidationError, match="extra"):
        UserMessage(content="hi", nme="typo")  # type: ignore[call-arg]


def test_missing_tool_call_arguments_default_to_empty_object() -> None:
    wire = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}],
    }
    message = from_openai(wire)
    assert isinstance(message, AssistantMessage)
    assert message.tool_calls == (ToolCall(id="c", name="f", arguments="{}"),)


def test_tool_calls_none_means_no_calls() -> None:
    message = from_openai({"role": "assistant", "content": "done", "tool_calls": None})
    assert message == AssistantMessage(content="done")


def test_tool_call_type_may_be_omitted() -> None:
    wire = {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f"}}]}
    message = from_openai(wire)
    assert isinstance(message, AssistantMessage)
    assert message.tool_calls[0].name == "f"


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ("not a dict", "expected a message dict, got str"),
        ({"content": "hi"}, "discriminator 'role'"),
        ({"role": "robot", "content": "hi"}, "'robot'"),
        ({"role": "user"}, r"user\.content: Field required"),
        ({"role": "user", "content": "hi", "nme": 1}, r"user\.nme: Extra inputs"),
        ({"role": "user", "content": 5}, r"user\.content: Input should be a valid string"),
        ({"role": "tool", "content": "x"}, r"tool\.tool_call_id: Field required"),
        (
            {"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]},
            "must have a 'function' object",
        ),
        ({"role": "assistant", "tool_calls": ["call"]}, "must have a 'function' object"),
        ({"role": "assistant", "tool_calls": "f()"}, "'tool_calls' must be a list"),
        (
            {"role": "assistant", "tool_calls": [{"id": "c", "type": "custom", "function": {}}]},
            "type must be 'function', got type='custom'",
        ),
        (
            {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f"}}]},
            r"assistant\.tool_calls\.0\.id",
        ),
        (
            {"role": "assistant", "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]},
            r"assistant\.tool_calls\.0\.name",
        ),
    ],
)
def test_bad_dicts_raise_usage_error_naming_the_problem(bad: Any, expected: str) -> None:
    with pytest.raises(UsageError, match=expected) as info:
        from_openai(bad)
    # the offending input (the message, or the bad tool call) is shown
    if isinstance(bad, dict):
        calls = bad.get("tool_calls")
        shown = calls[0] if isinstance(calls, list) and "assistant." not in expected else bad
        assert repr(shown) in str(info.value) or repr(calls) in str(info.value)


def test_public_api_is_pinned() -> None:
    assert set(messages_module.__all__) == {
        "AssistantMessage",
        "HostedSearch",
        "Message",
        "SystemMessage",
        "ToolCall",
        "ToolMessage",
        "UserMessage",
    }
    for name in messages_module.__all__:
        assert hasattr(messages_module, name)


# -- property: the round trip is exact for any message ------------------------------------

_text = st.text(max_size=30)
_calls = st.builds(ToolCall, id=st.text(min_size=1, max_size=10), name=_text, arguments=_text)
_messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(SystemMessage, content=_text),
    st.builds(UserMessage, content=_text),
    st.builds(
        AssistantMessage,
        content=st.none() | _text,
        tool_calls=st.lists(_calls, max_size=3).map(tuple),
        refusal=st.none() | _text,
    ),
    st.builds(ToolMessage, tool_call_id=_text, content=_text, name=st.none() | _text),
)


@settings(max_examples=50, deadline=None)
@given(st.lists(_messages, max_size=5))
def test_round_trip_property(history: list[Message]) -> None:
    wire = messages_to_openai(history)
    assert messages_from_openai(wire) == history
    assert messages_to_openai(messages_from_openai(wire)) == wire
