"""Conversation messages: frozen pydantic models with an exact OpenAI round-trip.

``to_openai(message)`` gives the Chat Completions message dict and
``from_openai(d)`` reads one back; for the dicts ``to_openai`` produces,
``to_openai(from_openai(d)) == d`` and ``from_openai(to_openai(m)) == m`` (except
``ToolMessage.is_error``, which the format does not carry).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from harness._errors import UsageError
from harness._validation import assert_never

__all__ = [
    "AssistantMessage",
    "Message",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
    "from_openai",
    "messages_from_openai",
    "messages_to_openai",
    "to_openai",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class ToolCall(BaseModel):
    """One tool call requested by the model."""

    model_config = _FROZEN

    id: str
    """Provider-assigned call id; the tool message answering it repeats it."""
    name: str
    """The tool's model-visible name."""
    arguments: str = "{}"
    """The arguments exactly as the model sent them: a JSON string, possibly malformed."""


class SystemMessage(BaseModel):
    """Instructions for the model."""

    model_config = _FROZEN

    role: Literal["system"] = "system"
    content: str
    """The instruction text."""


class UserMessage(BaseModel):
    """A user turn."""

    model_config = _FROZEN

    role: Literal["user"] = "user"
    content: str
    """The user's text."""


class AssistantMessage(BaseModel):
    """A model turn: text, tool calls, or both."""

    model_config = _FROZEN

    role: Literal["assistant"] = "assistant"
    content: str | None = None
    """The text answer, if any."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls in the order the model made them."""
    refusal: str | None = None
    """A refusal message, when the provider reports one."""


class ToolMessage(BaseModel):
    """The result of one tool call, as the model sees it."""

    model_config = _FROZEN

    role: Literal["tool"] = "tool"
    tool_call_id: str
    """The id of the call this answers."""
    content: str
    """The result text the model reads."""
    name: str | None = None
    """The tool's name (kept for traces; optional on the wire)."""
    is_error: bool = False
    """True when the call failed and ``content`` explains why (Anthropic sends it as
    ``tool_result.is_error``; the OpenAI formats have no such field and drop it)."""


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage,
    Field(discriminator="role"),
]
"""Any conversation message, discriminated by ``role``."""

_MESSAGE_ADAPTER: TypeAdapter[Message] = TypeAdapter(Message)


def to_openai(message: Message) -> dict[str, Any]:
    """Return the Chat Completions dict for ``message``."""
    match message:
        case AssistantMessage():
            out: dict[str, Any] = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                out["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    }
                    for call in message.tool_calls
                ]
            if message.refusal is not None:
                out["refusal"] = message.refusal
            return out
        case ToolMessage():
            out = {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
            if message.name is not None:
                out["name"] = message.name
            return out
        case SystemMessage() | UserMessage():
            return {"role": message.role, "content": message.content}
        case _:  # pragma: no cover - the union is closed
            assert_never(message)


def from_openai(data: Mapping[str, Any]) -> Message:
    """Read one Chat Completions message dict.

    Raises ``UsageError`` naming the problem when the dict is not a valid message.
    """
    if not isinstance(data, Mapping):
        raise UsageError(f"expected a message dict, got {type(data).__name__}: {data!r}")
    payload = dict(data)
    if payload.get("role") == "assistant":
        payload["tool_calls"] = _read_tool_calls(payload.get("tool_calls"))
    try:
        return _MESSAGE_ADAPTER.validate_python(payload)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'message'}: {err['msg']}"
            for err in exc.errors(include_url=False)
        )
        raise UsageError(
            f"not a valid chat message ({problems}); got {dict(data)!r}. Expected a dict "
            "with 'role' (system, user, assistant or tool) and that role's fields."
        ) from None


def _read_tool_calls(calls: Any) -> tuple[dict[str, Any], ...]:
    if calls is None:
        return ()
    if not isinstance(calls, (list, tuple)):
        raise UsageError(f"assistant 'tool_calls' must be a list, got {calls!r}")
    converted = []
    for call in calls:
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping):
            raise UsageError(f"assistant tool call must have a 'function' object, got {call!r}")
        kind = call.get("type", "function")
        if kind != "function":
            raise UsageError(
                f"assistant tool call type must be 'function', got type={kind!r} in {call!r}"
            )
        converted.append(
            {
                "id": call.get("id"),
                "name": function.get("name"),
                "arguments": function.get("arguments", "{}"),
            }
        )
    return tuple(converted)


def messages_to_openai(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Convert a history to Chat Completions dicts."""
    return [to_openai(m) for m in messages]


def messages_from_openai(data: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Read a history of Chat Completions dicts."""
    return [from_openai(d) for d in data]
