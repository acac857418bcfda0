"""The API's checks of a Converse request, with its texts (the fake's server side).

Bedrock answers a request it refuses with HTTP 400, the error's type in the
``x-amzn-ErrorType`` header (``ValidationException``) and ``{"message": ...}`` as the
body: botocore raises it as ``client.exceptions.ValidationException``. The rules that
bite when tools change mid-conversation, with the API's own messages where they are
known from the field:

- ``The toolConfig field must be defined when using toolUse and toolResult content
  blocks.``
- ``Expected toolResult blocks at messages.N.content for the following Ids: <ids>``
  (a call left unanswered, or answered under another id);
- ``The number of toolResult blocks at messages.N.content exceeds the number of toolUse
  blocks of previous turn.`` (a result for an unknown ``toolUseId``);
- ``1 validation error detected: Value '[]' at 'toolConfig.tools' failed to satisfy
  constraint: Member must have length greater than or equal to 1`` (a ``toolChoice``
  with no tools);
- a ``toolChoice`` naming a tool ``toolConfig.tools`` does not declare (the harness's
  wording: the API's is not published).

The ``strict`` profile adds a rule that is not the API's: every tool a ``toolUse`` block
names must be declared in ``toolConfig.tools``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from harness.formats._server import Strictness, WireError

__all__ = [
    "BLOCK_MEMBERS",
    "ERROR_TYPES",
    "NO_TOOL_CONFIG",
    "Checked",
    "ConverseWireError",
    "validate_body",
    "validate_from",
]

NO_TOOL_CONFIG = (
    "The toolConfig field must be defined when using toolUse and toolResult content blocks."
)
"""The API's 400 when tool blocks are in the history but ``toolConfig`` is absent."""

ERROR_TYPES: dict[int, str] = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
"""The Bedrock Runtime error type of each status (the ``x-amzn-ErrorType`` header)."""

BLOCK_MEMBERS = (
    "text",
    "image",
    "document",
    "video",
    "audio",
    "toolUse",
    "toolResult",
    "guardContent",
    "cachePoint",
    "reasoningContent",
    "citationsContent",
    "searchResult",
)
"""The members of the ``ContentBlock`` union a request may send."""

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class ConverseWireError(WireError):
    """An error answer of Bedrock Runtime: ``{"message": ...}`` and the error's type in
    the ``x-amzn-ErrorType`` header."""

    __module__ = "harness.formats.bedrock_converse"  # the public package, in tracebacks

    def __init__(
        self, status: int, message: str, *, type: str | None = None, **kwargs: Any
    ) -> None:
        error_type = type or ERROR_TYPES.get(
            status, "InternalServerException" if status >= 500 else "ValidationException"
        )
        super().__init__(status, message, type=error_type, **kwargs)
        self.headers.setdefault("x-amzn-ErrorType", f"{self.type}:http://internal.amazon.com/")

    def body(self) -> bytes:
        return json.dumps({"message": self.message}).encode()


def _bad(message: str) -> ConverseWireError:
    return ConverseWireError(400, message)


def _constraint(value: Any, where: str, constraint: str) -> ConverseWireError:
    shown = "null" if value is None else str(value)
    return _bad(
        f"1 validation error detected: Value '{shown}' at '{where}' failed to satisfy "
        f"constraint: {constraint}"
    )


def _check_tools(config: Any) -> list[str]:
    if config is None:
        return []
    if not isinstance(config, Mapping):
        raise _bad("toolConfig: expected an object with a 'tools' list")
    tools = config.get("tools")
    if tools is None:
        raise _constraint(None, "toolConfig.tools", "Member must not be null")
    if not isinstance(tools, list) or not tools:
        raise _constraint(
            "[]", "toolConfig.tools", "Member must have length greater than or equal to 1"
        )
    names: list[str] = []
    for index, entry in enumerate(tools, 1):
        if not isinstance(entry, Mapping) or len(entry) != 1:
            raise _bad(f"toolConfig.tools.{index}: exactly one of toolSpec, systemTool, cachePoint")
        if "toolSpec" not in entry:
            continue
        spec = entry["toolSpec"]
        name = spec.get("name") if isinstance(spec, Mapping) else None
        if not isinstance(name, str) or not _NAME.match(name):
            raise _constraint(
                name,
                f"toolConfig.tools.{index}.member.toolSpec.name",
                "Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
            )
        schema = spec.get("inputSchema")
        if not isinstance(schema, Mapping) or not isinstance(schema.get("json"), Mapping):
            raise _constraint(
                None,
                f"toolConfig.tools.{index}.member.toolSpec.inputSchema",
                "Member must not be null",
            )
        names.append(name)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise _bad(f"The toolConfig contains duplicate tool names: {', '.join(duplicates)}")
    return names


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [b for b in message.get("content") or () if isinstance(b, Mapping)]


@dataclasses.dataclass(frozen=True, slots=True)
class Checked:
    """What the checks know after the first ``count`` messages of a history: the role of
    the last one, the ``toolUse`` ids it left to answer, whether any tool block was seen.
    The fake's reader resumes from it when the next request repeats those messages."""

    count: int = 0
    role: str | None = None
    expected: tuple[str, ...] = ()
    uses_tools: bool = False


def _check_shape(messages: Sequence[Any], start: Checked) -> None:
    previous = start.role
    for index in range(start.count, len(messages)):
        message = messages[index]
        if not isinstance(message, Mapping):
            raise _bad(f"messages.{index}: expected an object with role and content")
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise _constraint(
                role,
                f"messages.{index + 1}.member.role",
                "Member must satisfy enum value set: [user, assistant]",
            )
        if index == 0 and role != "user":
            raise _bad(
                "A conversation must start with a user message. Try again with a "
                "conversation that starts with a user message."
            )
        if role == previous:
            raise _bad(
                "A conversation must alternate between user and assistant roles. Make sure "
                "the conversation alternates between user and assistant roles and try again."
            )
        previous = role
        content = message.get("content")
        if not isinstance(content, list):
            raise _constraint(
                content, f"messages.{index + 1}.member.content", "Member must not be null"
            )
        for position, block in enumerate(content):
            _check_block(block, index, position, role)


def _check_block(block: Any, index: int, position: int, role: str) -> None:
    where = f"messages.{index}.content.{position}"
    if not isinstance(block, Mapping) or len(block) != 1 or next(iter(block)) not in BLOCK_MEMBERS:
        shown = next(iter(block)) if isinstance(block, Mapping) and block else block
        raise _bad(
            f"{where}: a content block must set exactly one of {', '.join(BLOCK_MEMBERS)}; "
            f"got {shown!r}"
        )
    if "text" in block and (not isinstance(block["text"], str) or not block["text"].strip()):
        raise _bad(
            f"The text field in the ContentBlock object at {where} is blank. Add text to "
            "the text field, and try again."
        )
    if "toolUse" in block:
        use = block["toolUse"]
        if role != "assistant":
            raise _bad(f"{where}: toolUse blocks can only be in assistant messages")
        if not isinstance(use, Mapping) or not _ID.match(str(use.get("toolUseId", ""))):
            raise _bad(f"{where}.toolUse.toolUseId: must match [a-zA-Z0-9_-]+ (1 to 64 characters)")
    if "toolResult" in block:
        result = block["toolResult"]
        if role != "user":
            raise _bad(f"{where}: toolResult blocks can only be in user messages")
        if not isinstance(result, Mapping) or not isinstance(result.get("content"), list):
            raise _bad(f"{where}.toolResult: needs a toolUseId and a content list")
        if result.get("status") == "error" and not result["content"]:
            raise _bad(
                f"The content field at {where}.toolResult cannot be empty when status value "
                "is error."
            )


def _check_pairs(messages: Sequence[Mapping[str, Any]], start: Checked) -> list[str]:
    """Every ``toolUse`` answered by a ``toolResult`` in the next message; no stray results.
    The ids the last message leaves to answer."""
    expected: list[str] = list(start.expected)
    for index in range(start.count, len(messages)):
        message = messages[index]
        blocks = _blocks(message)
        if message.get("role") == "assistant":
            if expected:
                raise _missing(index, expected)
            expected = [str(b["toolUse"].get("toolUseId")) for b in blocks if "toolUse" in b]
            continue
        results = [str(b["toolResult"].get("toolUseId")) for b in blocks if "toolResult" in b]
        if len(results) > len(expected):
            raise _bad(
                f"The number of toolResult blocks at messages.{index}.content exceeds the "
                "number of toolUse blocks of previous turn."
            )
        missing = [i for i in expected if i not in results]
        if missing:
            raise _missing(index, missing)
        expected = []
    return expected


def _missing(index: int, ids: Sequence[str]) -> ConverseWireError:
    return _bad(
        f"Expected toolResult blocks at messages.{index}.content for the following Ids: "
        f"{', '.join(ids)}"
    )


def _check_choice(config: Any, names: Sequence[str]) -> None:
    choice = config.get("toolChoice") if isinstance(config, Mapping) else None
    if choice is None:
        return
    if (
        not isinstance(choice, Mapping)
        or len(choice) != 1
        or next(iter(choice))
        not in (
            "auto",
            "any",
            "tool",
        )
    ):
        raise _bad("toolConfig.toolChoice: exactly one of auto, any or tool must be set")
    tool = choice.get("tool")
    if tool is not None:
        name = tool.get("name") if isinstance(tool, Mapping) else None
        if name not in names:
            raise _bad(
                f"The tool {name!r} named in toolConfig.toolChoice is not defined in "
                f"toolConfig.tools (defined: {', '.join(names) or 'none'})."
            )


def _check_strict(messages: Sequence[Mapping[str, Any]], names: Sequence[str]) -> None:
    declared = set(names)
    for index, message in enumerate(messages):
        for position, block in enumerate(_blocks(message)):
            use = block.get("toolUse")
            if isinstance(use, Mapping) and use.get("name") not in declared:
                raise _bad(
                    f"messages.{index}.content.{position}: the history uses tool "
                    f"'{use.get('name')}', which is not declared in toolConfig.tools on this "
                    "request. Declare every tool the conversation has used (strict profile)."
                )


def validate_body(body: Mapping[str, Any], *, profile: Strictness = "default") -> list[str]:
    """Validate a Converse request like the API; the declared tool names.

    Raises ``ConverseWireError`` (400 ``ValidationException``) on the first problem.
    """
    return validate_from(body, Checked(), profile=profile)[0]


def validate_from(
    body: Mapping[str, Any], start: Checked, *, profile: Strictness = "default"
) -> tuple[list[str], Checked]:
    """``validate_body`` for a body whose first ``start.count`` messages were checked
    already (an earlier request of the conversation): only the rest are; the declared
    tool names and what the checks know after the whole history."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise _constraint(None, "messages", "Member must not be null")
    system = body.get("system")
    if system is not None and not isinstance(system, list):
        raise _bad("system: expected a list of system content blocks")
    config = body.get("toolConfig")
    names = _check_tools(config)
    _check_shape(messages, start)
    uses_tools = start.uses_tools or any(
        "toolUse" in b or "toolResult" in b for m in messages[start.count :] for b in _blocks(m)
    )
    if uses_tools and config is None:
        raise _bad(NO_TOOL_CONFIG)
    expected = _check_pairs(messages, start)
    _check_choice(config, names)
    if profile == "strict":
        _check_strict(messages, names)
    role = messages[-1].get("role") if messages else None
    return names, Checked(
        count=len(messages), role=role, expected=tuple(expected), uses_tools=uses_tools
    )
