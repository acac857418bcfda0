"""Gemini tools and tool choice, both ways: ``functionDeclarations`` entries and
``toolConfig.functionCallingConfig``.

A ``ToolDefinition`` is a function declaration with its JSON Schema as
``parametersJsonSchema``; a declaration that came with the OpenAPI-subset ``parameters``
reads as the same JSON Schema and keeps the original (``provider_extra``) so it goes
back as it came. Built-in tools (``googleSearch``, ``codeExecution``, ``urlContext``...)
are the API's own: they are not harness tools, and travel as hosted tool entries in the
request's ``settings.extra["tools"]``, sent after the declarations.

Tool choice: ``auto`` is ``AUTO``, ``none`` is ``NONE``, ``required`` is ``ANY``, a named
tool is ``ANY`` with ``allowedFunctionNames: [name]``, an allowed subset is
``allowedFunctionNames`` with ``ANY`` (``mode="required"``) or ``VALIDATED``
(``mode="auto"``: the model may answer or call one of them). ``tools`` is never edited
for it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from harness._errors import UsageError
from harness.formats.gemini_generate._schema import json_schema
from harness.formats.gemini_generate._wire import MODES, enum_name, get
from harness.tools._definitions import ToolChoice, ToolDefinition

__all__ = [
    "HOSTED_TOOLS",
    "NAME",
    "declarations_of",
    "hosted_tools_of",
    "tool_choice_from_param",
    "tool_choice_param",
    "tool_from_param",
    "tool_param",
]

NAME = "gemini-generate"
"""The format's name (``provider_extra`` key, cassette codec name)."""
HOSTED_TOOLS = "tools"
"""The ``settings.extra`` key holding built-in tool entries (``{"googleSearch": {}}``)."""

_DECLARATION_KEYS = frozenset(
    {"name", "description", "parameters", "parametersJsonSchema", "parameters_json_schema"}
)


def tool_param(definition: ToolDefinition) -> dict[str, Any]:
    """The ``functionDeclarations`` entry of ``definition``: ``name``, ``description``
    and ``parametersJsonSchema`` (or the OpenAPI ``parameters`` it was read with).

    Gemini has no namespaces, no tool search and no deferred loading (a deferred tool is
    left out by ``request_body`` until the history reveals it); ``strict`` and
    ``cache_control`` have no per-tool field and are left out.
    """
    if definition.namespace is not None or definition.is_hosted:
        field = "namespace" if definition.namespace is not None else f"search={definition.search!r}"
        raise UsageError(
            f"tool {definition.name!r} has {field} set, which the Gemini API cannot send; "
            "offer the tool directly (Gemini has no tool namespaces and runs no tool search)"
        )
    entry: dict[str, Any] = {"name": definition.name}
    if definition.description is not None:
        entry["description"] = definition.description
    extra = definition.extra_for(NAME)
    if "parameters" not in extra:
        entry["parametersJsonSchema"] = dict(definition.parameters)
    entry.update(extra)
    return entry


def tool_from_param(entry: Mapping[str, Any]) -> ToolDefinition:
    """The ``ToolDefinition`` of a ``functionDeclarations`` entry (with a ``name``)."""
    description = entry.get("description")
    schema = get(entry, "parametersJsonSchema")
    extra = {k: v for k, v in entry.items() if k not in _DECLARATION_KEYS}
    openapi = entry.get("parameters")
    if schema is None and openapi is not None:
        schema = json_schema(openapi)
        extra["parameters"] = openapi
    definition = ToolDefinition(
        name=str(entry["name"]),
        description=description if isinstance(description, str) else None,
        provider_extra={NAME: extra} if extra else {},
    )
    if isinstance(schema, Mapping) and schema:
        definition = dataclasses.replace(definition, parameters=dict(schema))
    return definition


def declarations_of(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every ``functionDeclarations`` entry of a body's ``tools`` (any tool object)."""
    out: list[Mapping[str, Any]] = []
    for tool in body.get("tools") or ():
        for entry in get(tool, "functionDeclarations") or ():
            if isinstance(entry, Mapping):
                out.append(entry)
    return out


def hosted_tools_of(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The built-in tool entries of a body's ``tools`` (those with no declarations)."""
    return [
        tool
        for tool in body.get("tools") or ()
        if isinstance(tool, Mapping) and get(tool, "functionDeclarations") is None
    ]


def tool_choice_param(choice: ToolChoice | None) -> dict[str, Any] | None:
    """``toolConfig`` for ``choice`` (``None`` when there is none)."""
    if choice is None:
        return None
    extra = choice.provider_extra.get(NAME)
    if extra is not None:
        return {"functionCallingConfig": dict(extra)}
    config: dict[str, Any]
    if choice.allowed is not None:
        mode = "ANY" if choice.mode == "required" else "VALIDATED"
        config = {"mode": mode, "allowedFunctionNames": list(choice.allowed)}
    elif choice.mode == "tool":
        config = {"mode": "ANY", "allowedFunctionNames": [choice.name]}
    else:
        config = {"mode": {"auto": "AUTO", "none": "NONE", "required": "ANY"}[choice.mode]}
    return {"functionCallingConfig": config}


def _names(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, Sequence) or isinstance(value, str) or not value:
        return None
    names = tuple(n for n in value if isinstance(n, str) and n)
    return names if len(names) == len(value) else None


def tool_choice_from_param(value: Any) -> ToolChoice | None:
    """The ``ToolChoice`` of a ``toolConfig`` (or its ``functionCallingConfig``); a shape
    it does not map (``VALIDATED`` without names) is kept in ``provider_extra``."""
    if not isinstance(value, Mapping):
        return None
    config = get(value, "functionCallingConfig")
    config = config if isinstance(config, Mapping) else value
    if get(config, "mode") is None and get(config, "allowedFunctionNames") is None:
        return None  # not a calling config (another provider's tool_choice)
    mode = enum_name(get(config, "mode"), MODES) or "MODE_UNSPECIFIED"
    names = _names(get(config, "allowedFunctionNames"))
    if mode in ("AUTO", "MODE_UNSPECIFIED") and names is None:
        return ToolChoice.auto()
    if mode == "NONE" and names is None:
        return ToolChoice.none()
    if mode == "ANY" and names is None:
        return ToolChoice.required()
    if mode == "ANY" and names is not None:
        return (
            ToolChoice.tool(names[0])
            if len(names) == 1
            else ToolChoice.allowed_tools(names, mode="required")
        )
    if mode == "VALIDATED" and names is not None:
        return ToolChoice.allowed_tools(names, mode="auto")
    return ToolChoice(mode="auto", provider_extra={NAME: dict(config)})
