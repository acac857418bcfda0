"""Gemini ``contents`` both ways: the neutral history as ``{role, parts}`` turns and back.

- A user message is a ``text`` part of a ``user`` turn; a tool result is a
  ``functionResponse`` part (``{name, id, response: {"output": ...}}``, ``{"error": ...}``
  for an error) of a ``user`` turn; consecutive parts of one role share a turn.
- An assistant message is a ``model`` turn: its text, then a ``functionCall`` part per
  call (``{name, args, id}``). The parts the API sent (thoughts, thought signatures,
  executed code) are sent back unchanged when the caller kept them (``turns``).
- System messages are ``systemInstruction``'s parts.

Read back, parts are read in camelCase and snake_case; a turn with no ``role`` (or the
old ``function`` role) is the user's; a call the API sent without an ``id`` gets one
derived from its name, arguments and place (``SYNTHETIC_ID_PREFIX``), so the same call
has the same id wherever it is read, and it is never sent to the API; a function
response without an ``id`` answers the first unanswered call of that name of the model
turn before it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness._errors import UsageError
from harness.formats._history import TurnKey, message_key
from harness.formats._json import arguments_object
from harness.formats.gemini_generate._wire import get
from harness.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

__all__ = [
    "SYNTHETIC_ID_PREFIX",
    "call_id",
    "call_part",
    "contents_of",
    "is_synthetic",
    "messages_of",
    "response_value",
    "system_of",
]

SYNTHETIC_ID_PREFIX = "gemini_"
"""How an id the harness gave a call the API sent without one begins."""

_PART_KINDS = (
    "text",
    "functionCall",
    "functionResponse",
    "inlineData",
    "fileData",
    "executableCode",
    "codeExecutionResult",
)


def call_id(name: str, args: Any, index: int) -> str:
    """The id of a call sent without one: the same for the same name, arguments and
    place among the turn's calls (read in a response or in a later history)."""
    text = json.dumps([name, args, index], sort_keys=True, ensure_ascii=False, default=str)
    return SYNTHETIC_ID_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:12]


def is_synthetic(call_id_: str) -> bool:
    """True for an id the harness made (never sent to the API)."""
    return call_id_.startswith(SYNTHETIC_ID_PREFIX)


def call_part(call: ToolCall) -> dict[str, Any]:
    """The ``functionCall`` part of a call (its id when the API gave it one)."""
    inner: dict[str, Any] = {"name": call.name, "args": arguments_object(call.arguments)}
    if not is_synthetic(call.id):
        inner["id"] = call.id
    return {"functionCall": inner}


def response_value(message: ToolMessage) -> dict[str, Any]:
    """A tool result's ``response`` object: ``{"output": text}``, ``{"error": text}``."""
    return {"error" if message.is_error else "output": message.content}


def _model_parts(
    message: AssistantMessage, turns: Mapping[TurnKey, Sequence[Mapping[str, Any]]]
) -> list[dict[str, Any]]:
    kept = turns.get(message_key(message)) if turns else None
    if kept:
        return [dict(p) for p in kept]
    if message.searches:
        raise UsageError(
            "the history holds a hosted tool search, which the Gemini API cannot send; "
            "Gemini runs no tool search (drop the search from the history)"
        )
    parts: list[dict[str, Any]] = []
    text = message.content if message.content else message.refusal
    if text:
        parts.append({"text": text})
    for call in message.tool_calls:
        if call.namespace is not None:
            raise UsageError(
                f"call {call.name!r} has namespace={call.namespace!r}, which the Gemini API "
                "cannot send"
            )
        parts.append(call_part(call))
    return parts or [{"text": ""}]


def _append(out: list[dict[str, Any]], role: str, parts: list[dict[str, Any]]) -> None:
    if out and out[-1]["role"] == role:
        out[-1]["parts"].extend(parts)
    else:
        out.append({"role": role, "parts": parts})


def contents_of(
    messages: Iterable[Message],
    turns: Mapping[TurnKey, Sequence[Mapping[str, Any]]] | None = None,
) -> tuple[list[str], list[dict[str, Any]]]:
    """The system texts and the ``contents`` of a history (``turns``: a model turn's
    parts as the API sent them, by ``message_key``, sent back unchanged)."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for message in messages:
        if isinstance(message, SystemMessage):
            if message.tools:
                raise UsageError(
                    "a system message adds tools mid-conversation, which the Gemini API has no "
                    "way to say; offer the tools in the request instead"
                )
            system.append(message.content)
        elif isinstance(message, UserMessage):
            _append(out, "user", [{"text": message.content}])
        elif isinstance(message, ToolMessage):
            name = names.get(message.tool_call_id) or message.name
            if not name:
                raise UsageError(
                    f"tool result {message.tool_call_id!r} answers no call of the history, and "
                    "the Gemini API needs the function's name: give the ToolMessage a name"
                )
            inner: dict[str, Any] = {"name": name, "response": response_value(message)}
            if not is_synthetic(message.tool_call_id):
                inner["id"] = message.tool_call_id
            _append(out, "user", [{"functionResponse": inner}])
        else:
            names.update((c.id, c.name) for c in message.tool_calls)
            _append(out, "model", _model_parts(message, turns or {}))
    return system, out


def system_of(value: Any) -> list[Message]:
    """The system messages of a ``systemInstruction`` (a content, or a string)."""
    if isinstance(value, str):
        return [SystemMessage(content=value)] if value else []
    parts = get(value, "parts") if isinstance(value, Mapping) else None
    return [
        SystemMessage(content=p["text"])
        for p in parts or ()
        if isinstance(p, Mapping) and isinstance(p.get("text"), str)
    ]


def _kind(part: Mapping[str, Any]) -> str | None:
    for kind in _PART_KINDS:
        if get(part, kind) is not None:
            return kind
    return next((str(k) for k in part if k not in ("thought", "thoughtSignature")), None)


def _tool_message(
    response: Mapping[str, Any], pending: list[tuple[str, str]], answered: set[str]
) -> ToolMessage:
    name = str(response.get("name") or "")
    given = response.get("id")
    if isinstance(given, str) and given:
        key = given
    else:
        key = next(
            (i for i, n in pending if n == name and i not in answered),
            call_id(name, None, -1),
        )
    answered.add(key)
    value = response.get("response")
    error = False
    if (
        isinstance(value, Mapping)
        and len(value) == 1
        and isinstance(next(iter(value.values())), str)
    ):
        ((field, text),) = value.items()
        error = field == "error"
        content = text if field in ("output", "error") else json.dumps(dict(value))
    elif isinstance(value, str):
        content = value
    else:
        content = json.dumps(value, ensure_ascii=False)
    return ToolMessage(tool_call_id=key, content=content, is_error=error)


def model_message(parts: Sequence[Any]) -> AssistantMessage:
    """The assistant message of a model turn's parts (thoughts left out)."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        call = get(part, "functionCall")
        if isinstance(call, Mapping):
            name, args = str(call.get("name") or ""), call.get("args")
            args = args if isinstance(args, Mapping) else {}
            given = call.get("id")
            ident = given if isinstance(given, str) and given else call_id(name, args, len(calls))
            calls.append(ToolCall(id=ident, name=name, arguments=json.dumps(args)))
        elif isinstance(part.get("text"), str) and part.get("thought") is not True:
            texts.append(part["text"])
    text = "".join(texts)
    return AssistantMessage(content=text or None, tool_calls=tuple(calls))


def messages_of(contents: Sequence[Any]) -> list[Message]:
    """The neutral messages of a ``contents`` array (read leniently: see the module)."""
    out: list[Message] = []
    pending: list[tuple[str, str]] = []
    answered: set[str] = set()
    for content in contents:
        if not isinstance(content, Mapping):
            continue
        parts = [p for p in get(content, "parts") or () if isinstance(p, Mapping)]
        if content.get("role") == "model":
            message = model_message(parts)
            out.append(message)
            pending = [(c.id, c.name) for c in message.tool_calls]
            answered = set()
            continue
        for part in parts:
            response = get(part, "functionResponse")
            if isinstance(response, Mapping):
                out.append(_tool_message(response, pending, answered))
            elif isinstance(part.get("text"), str):
                if part.get("thought") is not True:
                    out.append(UserMessage(content=part["text"]))
            else:
                out.append(UserMessage(content=f"[{_kind(part)}]"))
    return out
