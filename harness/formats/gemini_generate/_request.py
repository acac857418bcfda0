"""Gemini ``generateContent`` requests, both directions: neutral -> body (the adapter)
and body -> neutral (the fake, after ``validate_body``; recordings, leniently).

The body is the operation's input: the request's ``model`` (which goes in the path, not
the HTTP body: ``http_body``) and the JSON the API reads (``contents``,
``systemInstruction``, ``tools``, ``toolConfig``, ``generationConfig``...). Whether it
streams is the operation too (``:streamGenerateContent``), not a field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.formats._history import TurnKey
from harness.formats._sent_tools import sent_tools
from harness.formats._server import Strictness, WireRequest, count_iteration
from harness.formats.gemini_generate._contents import contents_of, messages_of, system_of
from harness.formats.gemini_generate._tools import (
    HOSTED_TOOLS,
    NAME,
    declarations_of,
    hosted_tools_of,
    tool_choice_from_param,
    tool_choice_param,
    tool_from_param,
    tool_param,
)
from harness.formats.gemini_generate._validation import GeminiWireError, validate_body
from harness.formats.gemini_generate._wire import get, snake
from harness.loop import ModelRequest, ModelSettings
from harness.messages import Message
from harness.tools._definitions import ToolDefinition

__all__ = [
    "HISTORY_KEY",
    "NAME",
    "RequestReader",
    "http_body",
    "read_request",
    "request_body",
    "request_from_body",
]

HISTORY_KEY = "contents"
"""The body field that holds the growing history."""

_FIELDS = ("model", "contents", "systemInstruction", "tools", "toolConfig")
_KNOWN = frozenset({*_FIELDS, *(snake(f) for f in _FIELDS)})


def _generation_config(request: ModelRequest, body: Mapping[str, Any]) -> dict[str, Any] | None:
    settings = request.settings
    config = dict(get(body, "generationConfig") or {})
    if settings.output_schema is not None:
        config.update(
            responseMimeType="application/json", responseJsonSchema=dict(settings.output_schema)
        )
    return config or None


def request_body(
    request: ModelRequest,
    *,
    model: str,
    stream: bool = False,
    defaults: Mapping[str, Any] | None = None,
    turns: Mapping[TurnKey, Sequence[Mapping[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The operation's input for ``request``: ``model`` and the HTTP body.

    ``tools`` holds one ``functionDeclarations`` entry (a deferred tool once the history
    revealed it), then the built-in tools of ``defaults`` and of the request's
    ``settings.extra`` (``HOSTED_TOOLS``); ``toolConfig`` the tool choice. ``defaults``
    apply first, ``settings.extra`` overrides them; ``turns`` maps assistant turns
    (``message_key``) to the parts the API sent, sent back unchanged (thought signatures
    included). ``stream`` chooses the operation, not a field.
    """
    del stream
    system, contents = contents_of(request.messages, turns)
    body: dict[str, Any] = {"model": model, "contents": contents}
    if system:
        body["systemInstruction"] = {"parts": [{"text": text} for text in system]}
    extra = {**(defaults or {}), **request.settings.extra}
    hosted = [dict(t) for t in extra.pop(HOSTED_TOOLS, None) or ()]
    tools = sent_tools(request)
    if tools or hosted:
        entries = [{"functionDeclarations": [tool_param(t) for t in tools]}] if tools else []
        body["tools"] = entries + hosted
    choice = tool_choice_param(request.settings.tool_choice) if tools else None
    if choice is not None:
        body["toolConfig"] = choice
    body.update(extra)
    config = _generation_config(request, body)
    if config is not None:
        body["generationConfig"] = config
    return body


def http_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """The HTTP body of an operation's input (``model`` goes in the path)."""
    return {k: v for k, v in body.items() if k != "model"}


def _settings(body: Mapping[str, Any]) -> ModelSettings:
    extra = {k: v for k, v in body.items() if k not in _KNOWN}
    hosted = hosted_tools_of(body)
    if hosted:
        extra[HOSTED_TOOLS] = [dict(t) for t in hosted]
    return ModelSettings(tool_choice=tool_choice_from_param(get(body, "toolConfig")), extra=extra)


def read_request(body: Mapping[str, Any]) -> ModelRequest:
    """The neutral request of a ``generateContent`` body, leniently (recordings: no API
    checks). Thoughts and thought signatures are not part of it; built-in tools are
    kept in ``settings.extra["tools"]``."""
    messages: list[Message] = system_of(get(body, "systemInstruction"))
    messages.extend(messages_of(get(body, "contents") or ()))
    tools: tuple[ToolDefinition, ...] = tuple(
        tool_from_param(entry)
        for entry in declarations_of(body)
        if isinstance(entry.get("name"), str) and entry.get("name")
    )
    return ModelRequest(
        messages=messages,
        tools=tools,
        tool_names=tuple(t.name for t in tools),
        settings=_settings(body),
        iteration=count_iteration(messages),
    )


def request_from_body(body: Any, *, profile: Strictness = "default") -> WireRequest:
    """Read a ``generateContent`` body like the API: ``GeminiWireError`` (its 400
    ``INVALID_ARGUMENT``) if the API would refuse it. ``model`` is the body's (the
    operation's input), else empty: the fake takes it from the path."""
    if not isinstance(body, Mapping):
        raise GeminiWireError(400, "Invalid JSON payload received.", code="INVALID_ARGUMENT")
    validate_body(http_body(body), profile=profile)
    model = body.get("model")
    return WireRequest(
        model=str(model) if isinstance(model, str) else "",
        request=read_request(body),
        stream=False,
        body=body,
    )


class RequestReader:
    """The fake's reader of ``generateContent`` bodies (the same interface as the other
    formats'; bodies are read whole)."""

    def __init__(self, *, profile: Strictness = "default") -> None:
        self.profile: Strictness = profile

    def read(self, body: Any) -> WireRequest:
        """The request of ``body``; ``GeminiWireError`` if the API would refuse it."""
        return request_from_body(body, profile=self.profile)
