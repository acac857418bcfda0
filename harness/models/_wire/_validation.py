"""Request validation of the fake OpenAI server: the checks the real API makes, same errors."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import jsonschema
from jsonschema.validators import validator_for

from harness.messages import AssistantMessage, Message, ToolMessage
from harness.models._wire._errors import WireError

__all__ = [
    "Api",
    "Profile",
    "responses_order",
    "validate_history",
    "validate_strict",
    "validate_tools",
]

Api = Literal["chat", "responses"]
Profile = Literal["default", "strict"]

MAX_TOOLS = 128
_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")


def _name_path(api: Api, index: int) -> str:
    return f"tools[{index}].function.name" if api == "chat" else f"tools[{index}].name"


def _parameters_path(api: Api, index: int) -> str:
    return f"tools[{index}].function.parameters" if api == "chat" else f"tools[{index}].parameters"


def validate_tools(tools: Sequence[Mapping[str, Any]], *, api: Api) -> None:
    """Reject too many tools, invalid names and invalid JSON schemas (400, like the API)."""
    if len(tools) > MAX_TOOLS:
        raise WireError(
            400,
            f"Invalid 'tools': array too long. Expected an array with maximum length "
            f"{MAX_TOOLS}, but got an array with length {len(tools)} instead.",
            param="tools",
            code="array_above_max_length",
        )
    for index, tool in enumerate(tools):
        function = tool.get("function")
        if not isinstance(function, Mapping):
            raise WireError(
                400,
                f"Missing required parameter: '{_name_path(api, index)}'.",
                param=_name_path(api, index),
                code="missing_required_parameter",
            )
        name = function.get("name")
        path = _name_path(api, index)
        if not isinstance(name, str) or not name:
            raise WireError(
                400,
                f"Missing required parameter: '{path}'.",
                param=path,
                code="missing_required_parameter",
            )
        if len(name) > 64:
            raise WireError(
                400,
                f"Invalid '{path}': string too long. Expected a string with maximum length 64, "
                f"but got a string with length {len(name)} instead.",
                param=path,
                code="string_above_max_length",
            )
        if not _NAME.match(name):
            raise WireError(
                400,
                f"Invalid '{path}': string does not match pattern. Expected a string that "
                "matches the pattern '^[a-zA-Z0-9_-]+$'.",
                param=path,
                code="invalid_value",
            )
        _check_schema(name, function.get("parameters"), _parameters_path(api, index))


def _check_schema(name: str, schema: Any, path: str) -> None:
    if schema is None:
        return
    problem: str | None
    if not isinstance(schema, Mapping):
        problem = f"{schema!r} is not of type 'object'"
    elif schema.get("type", "object") != "object":
        problem = (
            f"schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{schema['type']}\"'"
        )
    else:
        try:
            problem = _schema_problem(json.dumps(schema, sort_keys=True))
        except (TypeError, ValueError):
            problem = "the schema is not JSON"
    if problem is not None:
        raise WireError(
            400,
            f"Invalid schema for function '{name}': {problem}.",
            param=path,
            code="invalid_function_parameters",
        )


@functools.lru_cache(maxsize=1024)
def _schema_problem(schema_json: str) -> str | None:
    """What is wrong with a JSON schema (cached: the same tools come with every request)."""
    schema = json.loads(schema_json)
    try:
        validator_for(schema, default=jsonschema.Draft202012Validator).check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = ", ".join(repr(p) for p in exc.path)
        context = f"In context=({where}), " if where else ""
        return f"{context}{exc.message}"
    return None


def validate_history(
    messages: Sequence[Message],
    *,
    api: Api,
    where: Callable[[int], str] | None = None,
    start: int = 0,
) -> None:
    """Every tool result answers an earlier call; every call is answered (400 otherwise).

    Chat Completions needs the results right after the assistant message that made
    the calls; the Responses API only needs each output after its call. ``start``
    skips a prefix already accepted as a whole history (Chat Completions only).
    """
    if api == "chat":
        _validate_chat_order(messages, where or (lambda i: f"messages.[{i}].role"), start)
    else:
        responses_order(messages)


def _validate_chat_order(
    messages: Sequence[Message], where: Callable[[int], str], start: int = 0
) -> None:
    pending: dict[str, None] = {}
    opened_at = 0
    for index in range(start, len(messages)):
        message = messages[index]
        if isinstance(message, ToolMessage):
            if message.tool_call_id not in pending:
                raise WireError(
                    400,
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    param=where(index),
                )
            del pending[message.tool_call_id]
            continue
        if pending:
            _unanswered(list(pending), where(opened_at))
        if isinstance(message, AssistantMessage) and message.tool_calls:
            pending = {call.id: None for call in message.tool_calls}
            opened_at = index
    if pending:
        _unanswered(list(pending), where(opened_at))


def _unanswered(ids: list[str], param: str) -> None:
    raise WireError(
        400,
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(ids),
        param=param,
    )


def responses_order(
    messages: Sequence[Message], *, start: int = 0, called: Mapping[str, bool] | None = None
) -> dict[str, bool]:
    """The Responses API's order rule; returns every call id seen (all answered).

    ``start`` and ``called`` continue from an accepted history: its length and the
    ids this function returned for it.
    """
    seen: dict[str, bool] = dict(called) if called else {}
    pending = 0
    for index in range(start, len(messages)):
        message = messages[index]
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if seen.get(call.id) is not False:
                    pending += 1
                seen[call.id] = False
        elif isinstance(message, ToolMessage):
            answered = seen.get(message.tool_call_id)
            if answered is None:
                raise WireError(
                    400,
                    "No tool call found for function call output with call_id "
                    f"{message.tool_call_id}.",
                    param="input",
                )
            if answered is False:
                pending -= 1
            seen[message.tool_call_id] = True
    if pending:
        for call_id, answered in seen.items():
            if not answered:
                raise WireError(
                    400, f"No tool output found for function call {call_id}.", param="input"
                )
    return seen


def validate_strict(messages: Sequence[Message], tool_names: Sequence[str], *, api: Api) -> None:
    """Strict profile: the history may only call tools that are declared on this request.

    Some providers reject a conversation whose earlier turns used a tool that is no
    longer in ``tools``; this simulates them.
    """
    declared = set(tool_names)
    for index, message in enumerate(messages):
        if not isinstance(message, AssistantMessage):
            continue
        for position, call in enumerate(message.tool_calls):
            if call.name not in declared:
                path = (
                    f"messages[{index}].tool_calls[{position}].function.name"
                    if api == "chat"
                    else "input"
                )
                raise WireError(
                    400,
                    f"Invalid '{path}': the history calls tool '{call.name}', which is not "
                    "declared in 'tools' on this request. Declare every tool the conversation "
                    "has used (strict profile).",
                    param=path,
                    code="tool_not_declared",
                )
