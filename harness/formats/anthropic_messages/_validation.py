"""The API's checks of a Messages request body, with its texts (the fake's server side).

Checked on the raw body (the rules are about block order inside messages):
``model``, ``max_tokens`` and ``messages`` required; roles; content blocks of a known
``type`` (an unknown one is the API's 400 ``invalid_request_error``); tool names
``^[a-zA-Z0-9_-]{1,64}$`` and ``input_schema``; ``tool_choice`` only with tools;
and the three tool rules that bite when tools change mid-conversation, with the
API's own messages:

- ``Requests which include tool_use or tool_result blocks must define tools.``
- ``messages.N: `tool_use` ids were found without `tool_result` blocks immediately
  after: <ids>. Each `tool_use` block must have a corresponding `tool_result` block
  in the next message.``
- ``messages.N: Did not find K tool_result block(s) at the beginning of this message.
  Messages following tool_use blocks must begin with a matching number of tool_result
  blocks.``

The ``strict`` profile adds a rule that is not the API's: every tool a ``tool_use``
block names must be declared in ``tools`` (what some models and proxies demand).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from harness.formats._server import Strictness, WireError

__all__ = [
    "BLOCK_TYPES",
    "NO_TOOLS_DEFINED",
    "MessagesWireError",
    "error_body",
    "validate_body",
]

NO_TOOLS_DEFINED = "Requests which include tool_use or tool_result blocks must define tools."
"""The API's 400 when tool blocks are in the history but ``tools`` is empty or absent."""

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


BLOCK_TYPES = (
    "text",
    "image",
    "document",
    "search_result",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "tool_result",
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "container_upload",
    "tool_addition",
    "tool_removal",
)
"""The content block types a request may hold (the API's list changes with its betas:
these are the ones documented when this was written)."""
_BLOCK_TYPES = frozenset(BLOCK_TYPES)


def error_body(error_type: str, message: str) -> bytes:
    """``{"type": "error", "error": {"type": ..., "message": ...}}`` as bytes."""
    return json.dumps({"type": "error", "error": {"type": error_type, "message": message}}).encode()


class MessagesWireError(WireError):
    """An error answer of the Messages endpoint, with an Anthropic-shaped body."""

    __module__ = "harness.formats.anthropic_messages"  # the public package, in tracebacks and reprs

    def __init__(
        self, status: int, message: str, *, type: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(
            status,
            message,
            type=type
            or _TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error"),
            **kwargs,
        )

    def body(self) -> bytes:
        return error_body(self.type, self.message)


def _bad(message: str) -> MessagesWireError:
    return MessagesWireError(400, message)


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, Mapping)]
    return []


def _check_tools(tools: Any) -> list[str]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise _bad("tools: Input should be a valid list")
    names = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise _bad(f"tools.{index}: Input should be a valid dictionary or object")
        kind = tool.get("type", "custom")
        if kind not in ("custom", None):  # server tools (web_search_..., bash_...) are the API's
            if isinstance(tool.get("name"), str):
                names.append(tool["name"])
            continue
        name = tool.get("name")
        if not isinstance(name, str):
            raise _bad(f"tools.{index}.custom.name: Field required")
        if not _NAME.match(name):
            raise _bad(
                f"tools.{index}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )
        schema = tool.get("input_schema")
        if not isinstance(schema, Mapping):
            raise _bad(f"tools.{index}.custom.input_schema: Field required")
        if schema.get("type") != "object":
            raise _bad(f"tools.{index}.custom.input_schema.type: Input should be 'object'")
        names.append(name)
    duplicates = sorted(n for n, count in Counter(names).items() if count > 1)
    if duplicates:
        raise _bad(f"tools: Tool names must be unique. Duplicate names: {duplicates[0]}")
    return names


def _check_shape(messages: Sequence[Any]) -> None:
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise _bad(f"messages.{index}: Input should be a valid dictionary")
        if message.get("role") not in ("user", "assistant", "system"):
            raise _bad(f"messages.{index}.role: Input should be 'user', 'assistant' or 'system'")
        content = message.get("content")
        if not isinstance(content, (str, list)):
            raise _bad(f"messages.{index}.content: Field required")
        if isinstance(content, str):
            continue
        for position, block in enumerate(content):
            where = f"messages.{index}.content.{position}"
            if not isinstance(block, Mapping):
                raise _bad(f"{where}: Input should be a valid dictionary or object")
            kind = block.get("type")
            if kind is None:
                raise _bad(f"{where}.type: Field required")
            if kind not in _BLOCK_TYPES:
                raise _bad(
                    f"{where}: Input tag {kind!r} found using 'type' does not match any of the "
                    f"expected tags: {', '.join(repr(t) for t in BLOCK_TYPES)}"
                )
            if kind == "tool_use" and message["role"] != "assistant":
                raise _bad(f"{where}: tool_use blocks can only be in assistant messages")
            if kind == "tool_result" and message["role"] != "user":
                raise _bad(f"{where}: tool_result blocks can only be in user messages")


def _check_pairs(messages: Sequence[Mapping[str, Any]]) -> None:
    """Every ``tool_use`` answered at the start of the next message; no stray results."""
    expected: list[str] = []
    for index, message in enumerate(messages):
        blocks = _blocks(message.get("content"))
        if message.get("role") == "system":  # a tool addition: not a turn
            continue
        if message.get("role") == "user":
            leading = 0
            for block in blocks:
                if block.get("type") != "tool_result":
                    break
                leading += 1
            if expected and leading == 0:
                raise _bad(
                    f"messages.{index}: Did not find {len(expected)} tool_result block(s) at "
                    "the beginning of this message. Messages following tool_use blocks must "
                    "begin with a matching number of tool_result blocks."
                )
            answered = {str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"}
            missing = [i for i in expected if i not in answered]
            if missing:
                raise _bad(
                    f"messages.{index - 1}: `tool_use` ids were found without `tool_result` "
                    f"blocks immediately after: {', '.join(missing)}. Each `tool_use` block "
                    "must have a corresponding `tool_result` block in the next message."
                )
            for position, block in enumerate(blocks):
                if (
                    block.get("type") == "tool_result"
                    and str(block.get("tool_use_id")) not in expected
                ):
                    raise _bad(
                        f"messages.{index}.content.{position}: unexpected `tool_use_id` found in "
                        f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` "
                        "block must have a corresponding `tool_use` block in the previous message."
                    )
            expected = []
        else:
            if expected:  # two assistant turns in a row: the calls went unanswered
                raise _bad(
                    f"messages.{index - 1}: `tool_use` ids were found without `tool_result` "
                    f"blocks immediately after: {', '.join(expected)}. Each `tool_use` block "
                    "must have a corresponding `tool_result` block in the next message."
                )
            expected = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
    if expected and len(messages) > 0:
        raise _bad(
            f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` "
            f"blocks immediately after: {', '.join(expected)}. Each `tool_use` block must "
            "have a corresponding `tool_result` block in the next message."
        )


def _check_strict(messages: Sequence[Mapping[str, Any]], names: Sequence[str]) -> None:
    declared = set(names)
    for index, message in enumerate(messages):
        for position, block in enumerate(_blocks(message.get("content"))):
            if block.get("type") == "tool_use" and block.get("name") not in declared:
                raise _bad(
                    f"messages.{index}.content.{position}: the history uses tool "
                    f"'{block.get('name')}', which is not declared in 'tools' on this request. "
                    "Declare every tool the conversation has used (strict profile)."
                )


def validate_body(body: Mapping[str, Any], *, profile: Strictness = "default") -> list[str]:
    """Validate a ``POST /v1/messages`` body like the API; the declared tool names.

    Raises ``MessagesWireError`` (400, Anthropic-shaped body) on the first problem.
    """
    for field in ("model", "max_tokens", "messages"):
        if field not in body:
            raise _bad(f"{field}: Field required")
    if not isinstance(body["model"], str) or not body["model"]:
        raise _bad("model: Input should be a valid string")
    max_tokens = body["max_tokens"]
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise _bad("max_tokens: Input should be greater than or equal to 1")
    messages = body["messages"]
    if not isinstance(messages, list):
        raise _bad("messages: Input should be a valid list")
    if not messages:
        raise _bad("messages: at least one message is required")
    names = _check_tools(body.get("tools"))
    _check_shape(messages)
    uses_tools = any(
        b.get("type") in ("tool_use", "tool_result")
        for m in messages
        for b in _blocks(m["content"])
    )
    if uses_tools and not names:
        raise _bad(NO_TOOLS_DEFINED)
    _check_pairs(messages)
    choice = body.get("tool_choice")
    if choice is not None:
        if not isinstance(choice, Mapping) or choice.get("type") not in (
            "auto",
            "any",
            "tool",
            "none",
        ):
            raise _bad(
                "tool_choice: Input tag does not match any of the expected tags: "
                "'auto', 'any', 'tool', 'none'"
            )
        if choice.get("type") == "tool" and choice.get("name") not in names:
            raise _bad(f"Tool '{choice.get('name')}' not found in provided tools")
    _check_references(messages, names)
    if profile == "strict":
        _check_strict(messages, names)
    return names


def _check_references(messages: Sequence[Mapping[str, Any]], names: Sequence[str]) -> None:
    """Every ``tool_reference`` (in a ``tool_result``) and every ``tool_addition`` by
    reference names a tool of ``tools`` (or one an earlier addition defined inline)."""
    known = set(names)
    for index, message in enumerate(messages):
        for position, block in enumerate(_blocks(message.get("content"))):
            kind = block.get("type")
            where = f"messages.{index}.content.{position}"
            if kind == "tool_result":
                for inner_position, inner in enumerate(_blocks(block.get("content"))):
                    if inner.get("type") == "tool_reference":
                        name = _reference_name(
                            inner, "tool_name", f"{where}.content.{inner_position}"
                        )
                        if name not in known:
                            raise _bad(f"Tool reference '{name}' not found in available tools")
            elif kind == "tool_addition" and isinstance(block.get("tool"), Mapping):
                tool = block["tool"]
                if tool.get("type") == "tool_definition":
                    definition = tool.get("definition")
                    if isinstance(definition, Mapping) and isinstance(definition.get("name"), str):
                        known.add(definition["name"])
                elif tool.get("type") == "tool_reference":
                    name = _reference_name(tool, "name", f"{where}.tool")
                    if name not in known:
                        raise _bad(f"Tool reference '{name}' not found in available tools")


def _reference_name(reference: Mapping[str, Any], key: str, where: str) -> str:
    """The tool a ``tool_reference`` names, or the API's 400 for a missing or non-string one."""
    name = reference.get(key)
    if key not in reference:
        raise _bad(f"{where}.{key}: Field required")
    if not isinstance(name, str):
        raise _bad(f"{where}.{key}: Input should be a valid string")
    return name
