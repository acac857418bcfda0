"""Tool removal safety: keep a request valid after a strategy removed tools the history used.

Providers differ in what they demand of ``tools`` once the conversation holds tool calls
(``ModelCapabilities.tool_history``): OpenAI nothing (``free``); Anthropic at least one
declared tool (``tools_defined``: "Requests which include tool_use or tool_result blocks
must define tools."); strict proxies and some models every tool the history called
(``tools_declared``). A strategy that empties the toolset (a final state) or hides used
tools (an exclusive facade) breaks those rules. An adapter applies one policy:

- ``redeclare`` (default): declare the missing tools again, marked as no longer
  available. When no tool was offered, ``tool_choice`` becomes ``none`` so the model
  cannot call them; otherwise a call to one is refused by the loop like any tool that is
  not offered (an error result listing the offered tools). The trace still shows what
  the strategy offered.
- ``rewrite``: rewrite the calls to missing tools and their results as plain text turns
  (the model keeps the information, the provider sees no tool blocks for them).
- ``fail``: raise ``ToolHistoryError`` before the request is sent, naming the tools.
- ``off``: send the request as it is (and see the provider's 400).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from typing import Any, ClassVar, Literal, get_args

from harness._errors import UsageError
from harness.loop import ModelRequest
from harness.loop._model import ModelCapabilities, ToolHistoryRule
from harness.messages import AssistantMessage, Message, ToolMessage, UserMessage
from harness.tools import ToolChoice, ToolDefinition

__all__ = [
    "REMOVED_MARKER",
    "PreparesToolHistory",
    "ToolHistoryError",
    "ToolHistoryPolicy",
    "ToolMemory",
    "apply_tool_history",
    "check_policy",
    "missing_tools",
]

ToolHistoryPolicy = Literal["redeclare", "rewrite", "fail", "off"]
"""How an adapter keeps a request valid when the history calls tools no longer offered."""

REMOVED_MARKER = "[no longer available: do not call] "
"""Prefix of the description of a tool declared again by the ``redeclare`` policy."""


class ToolHistoryError(UsageError):
    """A strategy removed tools the conversation used, and the provider would reject that."""

    __module__ = "harness.models"  # the public package, in tracebacks and reprs


def check_policy(policy: Any) -> ToolHistoryPolicy:
    """``policy`` if valid, else ``UsageError`` naming the choices."""
    choices = get_args(ToolHistoryPolicy)
    if policy not in choices:
        raise UsageError(f"tool_history must be one of {list(choices)}, got {policy!r}")
    return policy  # type: ignore[no-any-return]


class ToolMemory:
    """The tool definitions offered during a run, by name (to declare removed ones again)."""

    def __init__(self) -> None:
        self._definitions: dict[str, ToolDefinition] = {}

    def remember(self, tools: Sequence[ToolDefinition]) -> None:
        for tool in tools:
            self._definitions[tool.name] = tool

    def get(self, name: str) -> ToolDefinition | None:
        return self._definitions.get(name)

    def clear(self) -> None:
        self._definitions.clear()


def _used(messages: Sequence[Message]) -> dict[str, int]:
    """Tool names the history called -> index of the first assistant message calling it."""
    used: dict[str, int] = {}
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                used.setdefault(call.name, index)
    return used


def missing_tools(request: ModelRequest, rule: ToolHistoryRule) -> list[str]:
    """Tools the history called that ``rule`` needs declared but the request does not offer."""
    if rule == "free":
        return []
    used = _used(request.messages)
    has_results = any(isinstance(m, ToolMessage) for m in request.messages)
    if rule == "tools_defined":
        if request.tools or not (used or has_results):
            return []
        return list(used)
    offered = set(request.tool_names)
    return [name for name in used if name not in offered]


def _stub(name: str, known: ToolDefinition | None) -> ToolDefinition:
    if known is None:
        return ToolDefinition(name=name, description=REMOVED_MARKER)
    return dataclasses.replace(
        known, name=name, description=REMOVED_MARKER + (known.description or "")
    )


def _redeclare(request: ModelRequest, missing: list[str], memory: ToolMemory) -> ModelRequest:
    tools = [*request.tools, *(_stub(name, memory.get(name)) for name in missing)]
    settings = request.settings
    if not request.tools:  # nothing was offered: keep it that way for the model
        settings = dataclasses.replace(
            settings, tool_choice=ToolChoice.none(), parallel_tool_calls=None
        )
    return dataclasses.replace(
        request, tools=tools, tool_names=(*request.tool_names, *missing), settings=settings
    )


def _rewrite(request: ModelRequest, missing: list[str]) -> ModelRequest:
    gone = set(missing)
    rewritten: dict[str, str] = {}  # call id -> tool name
    out: list[Message] = []
    held: list[Message] = []  # rewritten results wait until the batch's tool messages end

    def flush() -> None:
        out.extend(held)
        held.clear()

    for message in request.messages:
        if isinstance(message, ToolMessage):
            if message.tool_call_id in rewritten:
                name = rewritten[message.tool_call_id]
                held.append(UserMessage(content=f"[result of {name}]: {message.content}"))
            else:
                out.append(message)
            continue
        flush()
        if isinstance(message, AssistantMessage) and any(
            c.name in gone for c in message.tool_calls
        ):
            kept = tuple(c for c in message.tool_calls if c.name not in gone)
            notes = [
                f"[called {c.name} with {c.arguments}]"
                for c in message.tool_calls
                if c.name in gone
            ]
            rewritten.update({c.id: c.name for c in message.tool_calls if c.name in gone})
            text = "\n".join([message.content, *notes] if message.content else notes)
            message = message.model_copy(update={"content": text, "tool_calls": kept})
        out.append(message)
    flush()
    return dataclasses.replace(request, messages=out)


def apply_tool_history(
    request: ModelRequest,
    *,
    rule: ToolHistoryRule,
    policy: ToolHistoryPolicy,
    memory: ToolMemory | None = None,
    provider: str = "the provider",
) -> ModelRequest:
    """``request`` made acceptable under ``rule`` by ``policy`` (unchanged when it already is)."""
    if policy == "off":
        return request
    missing = missing_tools(request, rule)
    if not missing:
        return request
    if policy == "redeclare":
        return _redeclare(request, missing, memory or ToolMemory())
    if policy == "rewrite":
        return _rewrite(request, missing)
    need = (
        "at least one declared tool when the history holds tool calls"
        if rule == "tools_defined"
        else "every tool the history called to be declared"
    )
    raise ToolHistoryError(
        f"iteration {request.iteration}: the conversation called {missing!r}, but the "
        f"injection strategy no longer offers {'them' if len(missing) > 1 else 'it'} "
        f"(offered now: {list(request.tool_names)!r}) and {provider} requires {need} "
        f"(capabilities.tool_history={rule!r}). Fix: use tool_history='redeclare' (declare "
        "them again, calls refused) or 'rewrite' (history as text) on the model adapter, or "
        "keep the tools offered in the strategy. The trace shows which strategy removed them."
    )


class PreparesToolHistory:
    """An adapter's ``prepare``: its tool-history policy applied to a request, the offered
    tools remembered (to declare removed ones again), under the adapter's lock."""

    provider_label: ClassVar[str]
    """The provider as the ``fail`` policy's error names it (``the Gemini API``)."""
    capabilities: ModelCapabilities
    tool_history: ToolHistoryPolicy
    _tools: ToolMemory
    _lock: threading.Lock

    def prepare(self, request: ModelRequest) -> ModelRequest:
        """``request`` after the tool-history policy (what is actually sent)."""
        with self._lock:
            self._tools.remember(request.tools)
            return apply_tool_history(
                request,
                rule=self.capabilities.tool_history,
                policy=self.tool_history,
                memory=self._tools,
                provider=self.provider_label,
            )
