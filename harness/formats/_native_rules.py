"""The providers' rules for native dynamic tools, checked by the fakes on a decoded request.

Each rule gives the parameter at fault and a message; each format raises it as its own
error answer (OpenAI's or Anthropic's shape, status 400, ``invalid_request_error``). The
texts are the harness's own: the APIs' exact wording for these refusals is not published
(``docs/native-tools.md`` lists what is known), so tests pin the status and error type.

- a tool called before a search or an addition revealed it (``deferred_call``), or before
  the addition that made it callable when ``tools`` does not declare it (``added_call``);
- deferred tools with no search tool to find them (``deferred_without_search``);
- every tool deferred (``all_deferred``);
- an allowed subset naming a tool the request does not declare (``allowed_undeclared``);
- a function call in a namespace the request does not have (``unknown_namespace``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

from harness.loop import ModelRequest
from harness.messages import AssistantMessage, Message, SystemMessage, ToolMessage
from harness.tools._definitions import ToolDefinition

__all__ = ["NativeProblem", "NativeRules", "added_names", "native_problem", "offered_names"]

Rule = Literal[
    "deferred_call",
    "added_call",
    "deferred_without_search",
    "all_deferred",
    "allowed_undeclared",
    "unknown_namespace",
]


@dataclasses.dataclass(frozen=True, slots=True)
class NativeProblem:
    """Why a provider refuses a request."""

    rule: Rule
    param: str
    message: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NativeRules:
    """Which rules a provider applies."""

    search_required: bool = True
    """Deferred tools need a tool-search tool in the request (OpenAI). Anthropic accepts a
    custom tool whose results hold ``tool_reference`` blocks, so it only refuses a request
    where every tool is deferred."""
    namespaces: bool = False
    """Calls carry a namespace that must exist (OpenAI Responses)."""


def added_names(messages: Sequence[Message], start: int = 0) -> tuple[str, ...]:
    """Names the client's additions (``SystemMessage.tools``) from ``messages[start]`` on add."""
    found: dict[str, None] = {}
    for index in range(start, len(messages)):
        message = messages[index]
        if type(message) is SystemMessage and message.tools:
            found.update((t.name, None) for t in message.tools)
    return tuple(found)


def offered_names(tools: Sequence[ToolDefinition], added: Sequence[str]) -> tuple[str, ...]:
    """A decoded request's offered names (its ``tool_names``): the declared tools, then
    the ones the history's additions (``added``) made callable without declaring them."""
    declared = tuple(t.name for t in tools)
    if not added:
        return declared
    names = set(declared)
    return declared + tuple(dict.fromkeys(n for n in added if n not in names))


def native_problem(request: ModelRequest, rules: NativeRules) -> NativeProblem | None:
    """The first rule ``request`` breaks, or ``None``."""
    tools = request.tools
    deferred = {t.name for t in tools if t.defer_loading}
    functions = [t for t in tools if t.search is None]
    has_search = any(t.search is not None for t in tools)
    if deferred and functions and all(t.defer_loading for t in functions) and not has_search:
        return NativeProblem(
            "all_deferred",
            "tools",
            "All tools have defer_loading set. At least one tool must be loaded up front: "
            "add a tool search tool, or declare a tool without defer_loading.",
        )
    if deferred and rules.search_required and not has_search:
        return NativeProblem(
            "deferred_without_search",
            "tools",
            "Tools with defer_loading require a tool_search tool in 'tools' to find them.",
        )
    choice = request.settings.tool_choice
    if choice is not None and choice.allowed is not None:
        declared = {t.name for t in functions}
        for index, name in enumerate(choice.allowed):
            if name not in declared:
                return NativeProblem(
                    "allowed_undeclared",
                    f"tool_choice.tools[{index}]",
                    f"Tool '{name}' in tool_choice.allowed_tools is not defined in 'tools'.",
                )
    added = len(request.tool_names) > len(tools)  # offered names beyond the declared ones
    if deferred or has_search or added or (rules.namespaces and any(t.namespace for t in tools)):
        # the history is scanned only for requests that use native tools (a plain
        # request's fake stays incremental)
        return _history_problem(request, deferred, rules)
    return None


def _history_problem(
    request: ModelRequest, deferred: set[str], rules: NativeRules
) -> NativeProblem | None:
    namespaces = {t.namespace for t in request.tools if t.namespace is not None}
    declared = {t.name for t in request.tools if not t.defer_loading}
    later = set(added_names(request.messages)) - declared - deferred
    revealed: set[str] = set()
    for index, message in enumerate(request.messages):
        if isinstance(message, AssistantMessage):
            for search in message.searches:
                revealed.update(search.found)
            for call in message.tool_calls:
                if call.name in deferred and call.name not in revealed:
                    return NativeProblem(
                        "deferred_call",
                        f"messages[{index}]",
                        f"Tool '{call.name}' has defer_loading set and was called before a "
                        "tool search (or an addition) loaded it.",
                    )
                if call.name in later and call.name not in revealed:
                    return NativeProblem(
                        "added_call",
                        f"messages[{index}]",
                        f"Tool '{call.name}' was called before the addition that made it "
                        "callable; 'tools' does not declare it.",
                    )
                if (
                    rules.namespaces
                    and call.namespace is not None
                    and call.namespace not in namespaces
                    and call.namespace != call.name  # a revealed tool is its own namespace
                ):
                    return NativeProblem(
                        "unknown_namespace",
                        f"messages[{index}]",
                        f"Namespace '{call.namespace}' of the call to '{call.name}' is not "
                        "defined in 'tools'.",
                    )
        elif isinstance(message, (ToolMessage, SystemMessage)):
            revealed.update(t.name for t in message.tools)
    return None
