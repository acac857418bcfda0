"""What the two OpenAI formats (Chat Completions, Responses) share.

Both sides: the structured-output format, the text of content parts, the error body,
and the API's rules on tools and histories as the fake checks them, with the API's
texts (``param`` paths differ per format and are passed in).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jsonschema
from jsonschema.validators import validator_for

from harness._errors import ProviderError
from harness.formats._server import IdSource, WireError, invalid_type, now, provider_error_to_wire
from harness.loop import ModelSettings
from harness.messages import AssistantMessage, Message
from harness.tools._definitions import ToolDefinition

__all__ = [
    "BAD_JSON",
    "CHOICE_MODES",
    "MAX_TOOLS",
    "check_choice_mode",
    "check_schema",
    "check_tools",
    "error_details",
    "error_for",
    "json_schema_format",
    "missing_name",
    "missing_parameter",
    "model_entry",
    "model_list",
    "output_format_name",
    "require_object",
    "response_headers",
    "text_of",
    "validate_strict",
]

BAD_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
    "using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was "
    "sent was not valid JSON. If you have trouble figuring out how to fix this, please contact "
    "us through our help center at help.openai.com.)"
)
"""The API's 400 text for a body that is not a JSON object."""
MAX_TOOLS = 128
"""The most tools one request may declare."""
_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")
_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


# -- both sides: structured output, content parts, errors ----------------------------------


def require_object(body: Any) -> Mapping[str, Any]:
    """``body`` if it is a JSON object, else the API's 400 (not valid JSON)."""
    if not isinstance(body, Mapping):
        raise WireError(400, BAD_JSON)
    return body


def output_format_name(name: str | None) -> str:
    """A ``response_format`` name that the API accepts (``^[a-zA-Z0-9_-]{1,64}$``)."""
    cleaned = _NAME_CHARS.sub("_", name or "")[:64]
    return cleaned or "output"


def json_schema_format(settings: ModelSettings) -> dict[str, Any] | None:
    """The ``json_schema`` response format for a structured-output request, if any."""
    if settings.output_schema is None:
        return None
    return {
        "name": output_format_name(settings.output_name),
        "schema": dict(settings.output_schema),
        "strict": False,
    }


def text_of(content: Any, where: str) -> str | None:
    """Text of a message ``content``: a string or a list of text (or refusal) parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part, Mapping) and isinstance(part.get("refusal"), str):
                texts.append(part["refusal"])
        return "\n".join(texts)
    raise WireError(
        400,
        f"Invalid type for '{where}': expected one of a string or array of objects, "
        f"but got {type(content).__name__} instead.",
        param=where,
        code="invalid_type",
    )


def error_details(body: Any) -> tuple[str | None, str | None]:
    """``(code, message)`` of an OpenAI error body (``{"error": {...}}`` or the inner object):
    the code is the error's ``code``, else its ``type``."""
    error = body.get("error", body) if isinstance(body, Mapping) else None
    if not isinstance(error, Mapping):
        return None, None
    code = error.get("code") or error.get("type")
    message = error.get("message")
    return (
        str(code) if code is not None else None,
        str(message) if message is not None else None,
    )


# -- the server side: the API's rules --------------------------------------------------------


def check_tools(
    tools: Sequence[ToolDefinition],
    *,
    name_path: Callable[[int], str],
    parameters_path: Callable[[int], str],
    loaded: Sequence[ToolDefinition] | None = None,
) -> None:
    """Refuse too many tools, invalid names and invalid JSON schemas (400, like the API).

    ``MAX_TOOLS`` counts ``loaded`` (default: every tool): the Responses API's deferred
    tools are not loaded until a search finds them, and its tool search is documented
    for catalogs of any size, so the fake counts the tools offered up front.
    """
    count = len(tools if loaded is None else loaded)
    if count > MAX_TOOLS:
        raise WireError(
            400,
            f"Invalid 'tools': array too long. Expected an array with maximum length "
            f"{MAX_TOOLS}, but got an array with length {count} instead.",
            param="tools",
            code="array_above_max_length",
        )
    for index, tool in enumerate(tools):
        name, path = tool.name, name_path(index)
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
        check_schema(name, tool.parameters, parameters_path(index))


def missing_name(path: str) -> WireError:
    """The API's 400 for a tool without a name."""
    return missing_parameter(path)


def missing_parameter(path: str) -> WireError:
    """The API's 400 for a required field left out (``tool_choice.function``...)."""
    return WireError(
        400, f"Missing required parameter: '{path}'.", param=path, code="missing_required_parameter"
    )


CHOICE_MODES = ("auto", "required")
"""The modes of an ``allowed_tools`` tool choice (Chat Completions and Responses)."""


def check_choice_mode(mode: Any, path: str) -> None:
    """The API's 400 for an ``allowed_tools`` mode it does not know (or none)."""
    if mode is None:
        raise missing_parameter(path)
    if not isinstance(mode, str):
        raise invalid_type(path, "a string", mode)
    if mode not in CHOICE_MODES:
        raise WireError(
            400,
            f"Invalid value: '{mode}'. Supported values are: 'auto' and 'required'.",
            param=path,
            code="invalid_value",
        )


def check_schema(name: str, schema: Any, path: str) -> None:
    """The API's 400 when ``schema`` is not a valid JSON Schema of an object."""
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


def validate_strict(
    messages: Sequence[Message], tool_names: Sequence[str], *, call_path: Callable[[int, int], str]
) -> None:
    """Strict profile: the history may only call tools that are declared on this request.

    Some providers reject a conversation whose earlier turns used a tool that is no
    longer in ``tools``; this simulates them. ``call_path(message, call)`` names the field.
    """
    declared = set(tool_names)
    for index, message in enumerate(messages):
        if not isinstance(message, AssistantMessage):
            continue
        for position, call in enumerate(message.tool_calls):
            if call.name not in declared:
                path = call_path(index, position)
                raise WireError(
                    400,
                    f"Invalid '{path}': the history calls tool '{call.name}', which is not "
                    "declared in 'tools' on this request. Declare every tool the conversation "
                    "has used (strict profile).",
                    param=path,
                    code="tool_not_declared",
                )


def error_for(exc: ProviderError | WireError) -> WireError:
    """The API's error answer for a served model's ``ProviderError`` (a ``WireError`` is
    already one)."""
    return exc if isinstance(exc, WireError) else provider_error_to_wire(exc)


def response_headers(ids: IdSource) -> dict[str, str]:
    """Headers the OpenAI API sends with every answer."""
    return {
        "x-request-id": ids.next("req_"),
        "openai-processing-ms": "0",
        "openai-version": "2020-10-01",
    }


def model_entry(model_id: str) -> dict[str, Any]:
    """``GET /v1/models/{id}``: one model, as the API lists it."""
    return {"id": model_id, "object": "model", "created": now(), "owned_by": "harness"}


def model_list(model_ids: Sequence[str]) -> dict[str, Any]:
    """``GET /v1/models``: the models the fake serves."""
    return {"object": "list", "data": [model_entry(m) for m in model_ids]}
