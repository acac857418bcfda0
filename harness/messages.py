"""Conversation messages: the neutral form of a history, frozen pydantic models.

Each wire format of ``harness.formats`` turns them into its API's shape and back (the
Chat Completions message dicts that scenario files use are
``harness.formats.openai_chat.message_to_dict`` / ``message_from_dict``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AssistantMessage",
    "Message",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
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
