"""Conversation messages: the neutral form of a history, frozen pydantic models.

Each wire format of ``harness.formats`` turns them into its API's shape and back (the
Chat Completions message dicts that scenario files use are
``harness.formats.openai_chat.message_to_dict`` / ``message_from_dict``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, InstanceOf

from harness.tools._definitions import ToolDefinition

__all__ = [
    "AssistantMessage",
    "HostedSearch",
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
    namespace: str | None = None
    """The namespace the called tool belongs to, when the provider says (OpenAI Responses
    ``function_call.namespace``); ``name`` is always the plain function name."""


class SystemMessage(BaseModel):
    """Instructions for the model; or tools the client adds at this point of the
    conversation (``tools``), leaving the earlier prefix, and so the prompt cache, intact."""

    model_config = _FROZEN

    role: Literal["system"] = "system"
    content: str
    """The instruction text (``""`` for a message that only adds tools)."""
    tools: tuple[InstanceOf[ToolDefinition], ...] = ()
    """Tools made callable from here on (Anthropic's ``tool_addition`` blocks in a
    ``role: "system"`` message; OpenAI Responses' ``additional_tools`` input item)."""


class HostedSearch(BaseModel):
    """One tool search the provider ran during a model turn (not a call the loop answers).

    Each format maps its API's search call and result items to it
    (``harness.formats.anthropic_messages._native``, ``openai_responses._native``). The
    tools it found are callable from then on.
    """

    model_config = _FROZEN

    id: str
    """The provider's id of the search call (its result repeats it)."""
    tool: str = ""
    """The search tool's name (``harness.formats._search_names``); ``""`` for a result
    whose call was in an earlier response (a stream that split them)."""
    arguments: str = "{}"
    """The query as the model sent it (JSON text: ``{"query": ...}``, ``{"pattern": ...}``)."""
    found: tuple[str, ...] = ()
    """Names of the tools the search revealed, in the provider's order."""
    complete: bool = True
    """False when the response ended before the search's result (it comes with the next)."""
    provider_data: dict[str, Any] = Field(default_factory=dict)
    """The provider's own blocks or items, by format name, sent back unchanged to that
    format (ids, ``caller``, the found definitions as the provider wrote them)."""


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
    searches: tuple[HostedSearch, ...] = ()
    """Tool searches the provider ran in this turn, before its text and calls."""


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
    tools: tuple[InstanceOf[ToolDefinition], ...] = ()
    """The tools this result reveals (a client-side tool search): Anthropic sends them as
    ``tool_reference`` blocks, OpenAI Responses as a ``tool_search_output`` item."""


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage,
    Field(discriminator="role"),
]
"""Any conversation message, discriminated by ``role``."""
