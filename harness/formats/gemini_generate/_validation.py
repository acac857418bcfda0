"""The Gemini API's checks of a ``generateContent`` body, with its error shape and texts.

What the fake refuses as the API does (a 400 ``INVALID_ARGUMENT``): a body that is not a
request (no ``contents``, a bad ``role``, a turn with no parts, a part with no data), a
declaration with no name or declared twice, a ``functionCallingConfig`` with an unknown
mode, ``allowedFunctionNames`` outside ``ANY``/``VALIDATED`` or naming an undeclared
function, a calling config with no declarations, a history that calls an undeclared
function, a function response turn whose responses do not match the calls of the turn
before it one for one (count and names), a function call turn that follows neither a
user turn nor a function response turn, and a thought signature the fake issued that
comes back changed (another alphabet of the same bytes is the same signature).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from harness.formats._server import Strictness, WireError
from harness.formats.gemini_generate._tools import declarations_of
from harness.formats.gemini_generate._wire import MODES, get, signature_bytes

__all__ = ["STATUS_NAMES", "GeminiWireError", "signature_for", "validate_body"]

STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
"""The ``google.rpc`` status the API names for an HTTP status."""

_ROLES = ("user", "model", "function")
_SIGNED = b"harness-thought:"


class GeminiWireError(WireError):
    """An error answer in Google's shape: ``{"error": {"code", "message", "status"}}``."""

    __module__ = "harness.formats.gemini_generate"

    def body(self) -> bytes:
        status = STATUS_NAMES.get(self.status, "UNKNOWN" if self.status < 500 else "INTERNAL")
        if self.code is not None and self.code in STATUS_NAMES.values():
            status = self.code
        error = {"code": self.status, "message": self.message, "status": status}
        return json.dumps({"error": error}).encode()


def _bad(message: str) -> GeminiWireError:
    return GeminiWireError(400, message, code="INVALID_ARGUMENT")


def signature_for(name: str, args: Any) -> str:
    """The thought signature the fake gives a call (base64): the bytes say which call."""
    digest = hashlib.sha256(json.dumps([name, args], sort_keys=True).encode()).digest()[:18]
    return base64.b64encode(_SIGNED + digest).decode()


def _check_signature(part: Mapping[str, Any], call: Mapping[str, Any], where: str) -> None:
    raw = get(part, "thoughtSignature")
    if raw is None:
        return
    data = signature_bytes(raw)
    if data is None:
        raise _bad(
            f"Invalid value at '{where}.thought_signature' (TYPE_BYTES), Base64 decoding failed"
        )
    if data.startswith(_SIGNED):
        expected = signature_bytes(signature_for(str(call.get("name")), call.get("args") or {}))
        if data != expected:
            raise _bad(f"Corrupted thought signature at {where}: send it back as it came.")


def _check_contents(contents: Any) -> list[tuple[str, list[Mapping[str, Any]]]]:
    if not isinstance(contents, list) or not contents:
        raise _bad("* GenerateContentRequest.contents: contents is not specified")
    turns = []
    for i, content in enumerate(contents):
        if not isinstance(content, Mapping):
            raise _bad(f"Invalid JSON payload received. contents[{i}] must be an object.")
        role = content.get("role") or "user"
        if role not in _ROLES:
            raise _bad("Please use a valid role: user, model.")
        parts = get(content, "parts")
        if not isinstance(parts, list) or not parts:
            raise _bad(
                f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty."
            )
        for j, part in enumerate(parts):
            if not isinstance(part, Mapping) or not any(
                k not in ("thought", "thoughtSignature", "thought_signature") for k in part
            ):
                raise _bad(
                    f"* GenerateContentRequest.contents[{i}].parts[{j}].data: required oneof "
                    "field 'data' must have one initialized field"
                )
        turns.append(("model" if role == "model" else "user", parts))
    return turns


def _declared(body: Mapping[str, Any]) -> set[str]:
    names: set[str] = set()
    for i, entry in enumerate(declarations_of(body)):
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise _bad(
                f"* GenerateContentRequest.tools[0].function_declarations[{i}].name: Name "
                "cannot be empty."
            )
        if name in names:
            raise _bad(f"Duplicate function declaration found: {name}")
        if entry.get("parameters") is not None and get(entry, "parametersJsonSchema") is not None:
            raise _bad(
                f"* GenerateContentRequest.tools[0].function_declarations[{i}]: parameters and "
                "parameters_json_schema cannot both be set"
            )
        names.add(name)
    return names


def _check_config(body: Mapping[str, Any], declared: set[str]) -> None:
    config = get(get(body, "toolConfig"), "functionCallingConfig")
    if not isinstance(config, Mapping):
        return
    where = "tool_config.function_calling_config"
    raw = get(config, "mode")
    mode = MODES[raw] if isinstance(raw, int) and 0 <= raw < len(MODES) else raw
    if mode is not None and mode not in MODES:
        raise _bad(
            f"Invalid value at '{where}.mode' (type.googleapis.com/google.ai.generativelanguage."
            f"v1beta.FunctionCallingConfig.Mode), {json.dumps(raw)}"
        )
    names = get(config, "allowedFunctionNames")
    if names is not None and not isinstance(names, list):
        raise _bad(
            f"Invalid value at '{where}.allowed_function_names' (TYPE_STRING): expected a list"
        )
    if mode in ("ANY", "VALIDATED", "AUTO") and not declared and (names or mode == "ANY"):
        raise _bad("Function calling config is set without function_declarations.")
    if names and mode not in ("ANY", "VALIDATED"):
        raise _bad(
            f"* GenerateContentRequest.{where}.allowed_function_names: allowed_function_names "
            "should only be set when the mode is ANY or VALIDATED."
        )
    for k, name in enumerate(names or ()):
        if name not in declared:
            raise _bad(
                f"* GenerateContentRequest.{where}.allowed_function_names[{k}]: function "
                f"{name!r} is not declared in tools (declared: {_declared_names(declared)})."
            )


def _calls(parts: Sequence[Mapping[str, Any]], key: str) -> list[Mapping[str, Any]]:
    return [c for c in (get(p, key) for p in parts) if isinstance(c, Mapping)]


def _declared_names(declared: set[str]) -> str:
    return ", ".join(sorted(declared)) or "none"


def _check_calls(i: int, parts: Sequence[Mapping[str, Any]], declared: set[str]) -> None:
    for j, part in enumerate(parts):
        call = get(part, "functionCall")
        if not isinstance(call, Mapping):
            continue
        name = call.get("name")
        if name not in declared:
            raise _bad(
                f"* GenerateContentRequest.contents[{i}].parts[{j}].function_call.name: "
                f"function {name!r} is called in the history but not declared in tools "
                f"(declared: {_declared_names(declared)})."
            )
        _check_signature(part, call, f"contents[{i}].parts[{j}]")


def _check_answers(i: int, made: list[Mapping[str, Any]], back: list[Mapping[str, Any]]) -> None:
    """The function responses of turn ``i`` match the calls ``made`` one for one."""
    names_made = Counter(str(c.get("name")) for c in made)
    names_back = Counter(str(r.get("name")) for r in back)
    if len(back) != len(made):
        raise _bad(
            "Please ensure that the number of function response parts is equal to the "
            "number of function call parts of the function call turn "
            f"(contents[{i}] has {len(back)}, the turn before it {len(made)})."
        )
    if names_back != names_made:
        answered, called = sorted(names_back.elements()), sorted(names_made.elements())
        raise _bad(
            "Please ensure that the function response parts name the functions of the "
            f"function call turn (contents[{i}] answers {answered}, the calls were {called})."
        )


def _check_turns(turns: Sequence[tuple[str, list[Mapping[str, Any]]]], declared: set[str]) -> None:
    previous: tuple[str, list[Mapping[str, Any]]] = ("user", [])
    for i, (role, parts) in enumerate(turns):
        made = _calls(previous[1], "functionCall") if previous[0] == "model" else []
        back = _calls(parts, "functionResponse")
        if role == "model" and _calls(parts, "functionCall"):
            if previous[0] == "model" and i:
                raise _bad(
                    "Please ensure that function call turn comes immediately after a user turn "
                    "or after a function response turn."
                )
            _check_calls(i, parts, declared)
        if back and not made:
            raise _bad(
                "Please ensure that function response turn comes immediately after a "
                "function call turn."
            )
        if made:
            _check_answers(i, made, back)
        previous = (role, parts)


def validate_body(body: Any, *, profile: Strictness = "default") -> None:
    """Refuse ``body`` as the API would (``GeminiWireError``, a 400 ``INVALID_ARGUMENT``)."""
    del profile  # the API itself refuses calls to undeclared functions: strict adds nothing
    if not isinstance(body, Mapping):
        raise _bad("Invalid JSON payload received. Expected a JSON object.")
    turns = _check_contents(get(body, "contents"))
    declared = _declared(body)
    _check_config(body, declared)
    _check_turns(turns, declared)
