"""Matching LLM requests by meaning, with a readable diff when they differ.

``semantic`` compares the model, the messages (roles, text, tool-call ids, names
and arguments, tool results) and the names and schemas of the offered tools, and
ignores volatile fields (``stream_options``, ``user``, ``metadata``, ``store``,
``include``, ``strict: false``, ``content: null`` vs absent, key order, JSON
whitespace; for Anthropic Messages also ``stream``, ``cache_control`` and the system
prompt's block form). ``strict`` adds every other body field; ``path-only`` checks only
the method and path (the behaviour of plain vcrpy playback, for legacy cassettes).

``llm_semantic`` and ``llm_strict`` are the first two as request matchers in vcrpy's
signature (``matcher(r1, r2)`` raising ``AssertionError``); ``harness.testing``
registers them on its ``vcr.VCR``, and a plain ``vcr.VCR`` can too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

from harness.formats import Codec, ParsedRequest, codec_for
from harness.messages import AssistantMessage, Message, ToolMessage

__all__ = [
    "MATCH_MODES",
    "MatchMode",
    "body_differences",
    "llm_semantic",
    "llm_strict",
    "request_differences",
]

MatchMode = Literal["semantic", "strict", "path-only"]
MATCH_MODES: tuple[str, ...] = get_args(MatchMode)
"""The built-in matchers, selectable per test."""


_EMPTY_ASSISTANT = {"role": "assistant"}
"""An assistant message with no text and no calls (some clients send one): no meaning."""


def _canonical(value: Any) -> Any:
    """JSON-comparable form: arguments parsed, whitespace of text collapsed."""
    if isinstance(value, Mapping):
        return {k: _canonical(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, str):
        return " ".join(value.split())
    return value


def _arguments(text: str) -> Any:
    try:
        return _canonical(json.loads(text))
    except (ValueError, TypeError):
        return " ".join(str(text).split())


def _message_view(message: Message) -> dict[str, Any]:
    """What a message means, comparable: role, text, calls (arguments parsed), the call a
    result answers (a tool result's echoed name and ``is_error`` are left out: no format
    but Anthropic's carries ``is_error``, and the id identifies the call)."""
    view: dict[str, Any] = {"role": message.role}
    content = _canonical(message.content)
    if content not in ("", None):
        view["content"] = content
    if isinstance(message, AssistantMessage):
        if message.refusal is not None:
            view["refusal"] = _canonical(message.refusal)
        if message.tool_calls:
            view["calls"] = [
                {"id": c.id, "name": c.name, "arguments": _arguments(c.arguments)}
                for c in message.tool_calls
            ]
    elif isinstance(message, ToolMessage):
        view["result_for"] = message.tool_call_id
    return view


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _schema(parameters: Mapping[str, Any]) -> str:
    return json.dumps(_canonical(dict(parameters)), sort_keys=True)


def _describe(view: Mapping[str, Any]) -> str:
    role = view.get("role", "?")
    parts = []
    if "content" in view:
        parts.append(f"text {_short(view['content'], 80)}")
    for call in view.get("calls", ()):
        parts.append(f"call {call['name']}({_short(call['arguments'], 60)}) id={call['id']}")
    if "result_for" in view:
        parts.insert(0, f"result for {view['result_for']}")
    return f"{role}: {'; '.join(parts) or '(empty)'}"


def request_differences(
    recorded: ParsedRequest, actual: ParsedRequest, *, check_model: bool = True
) -> list[str]:
    """What differs between two LLM requests, most telling first (empty when they match)."""
    out: list[str] = []
    if check_model and recorded.model and actual.model and recorded.model != actual.model:
        out.append(f"model differs: recorded {recorded.model!r}, now {actual.model!r}")
    was, now = recorded.tool_names, actual.tool_names
    if set(was) != set(now):
        added = [n for n in now if n not in was]
        removed = [n for n in was if n not in now]
        change = " ".join([*(f"+{n}" for n in added), *(f"-{n}" for n in removed)])
        out.append(f"offered tools differ: {change}")
    recorded_schemas = {t.name: _schema(t.parameters) for t in recorded.tools}
    for tool in actual.tools:
        before = recorded_schemas.get(tool.name)
        if before is not None and before != _schema(tool.parameters):
            out.append(
                f"schema of tool {tool.name!r} differs: recorded {_short(json.loads(before))}, "
                f"now {_short(json.loads(_schema(tool.parameters)))}"
            )
    old = [v for v in map(_message_view, recorded.messages) if v != _EMPTY_ASSISTANT]
    new = [v for v in map(_message_view, actual.messages) if v != _EMPTY_ASSISTANT]
    for i, (a, b) in enumerate(zip(old, new, strict=False)):
        if a != b:
            out.append(f"message {i} differs: recorded {_describe(a)} | now {_describe(b)}")
            break
    else:
        if len(old) != len(new):
            longer, which = (old, "recorded") if len(old) > len(new) else (new, "now")
            extra = longer[min(len(old), len(new))]
            out.append(
                f"message count differs: recorded {len(old)}, now {len(new)} "
                f"(first extra, {which}: {_describe(extra)})"
            )
    return out


def _strict_rest(codec: Codec, body: Mapping[str, Any]) -> dict[str, Any]:
    skipped = codec.compared_fields | codec.volatile_fields
    return {k: _canonical(v) for k, v in body.items() if k not in skipped and v is not None}


def _decode(body: Any) -> Any:
    if isinstance(body, (bytes, bytearray)):
        if not body:
            return None
        try:
            return json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return bytes(body)
    if isinstance(body, str):
        try:
            return json.loads(body)
        except ValueError:
            return body
    return body


def body_differences(
    method: str,
    path: str,
    recorded_body: Any,
    actual_body: Any,
    *,
    mode: str = "semantic",
) -> list[str]:
    """Differences between two request bodies to the same endpoint under ``mode``."""
    if mode == "path-only":
        return []
    recorded, actual = _decode(recorded_body), _decode(actual_body)
    codec = codec_for(method, path)
    if codec is None or not isinstance(recorded, Mapping) or not isinstance(actual, Mapping):
        if mode == "strict" and recorded != actual:
            return ["body differs"]
        return []
    try:
        old, new = codec.parse_request(recorded), codec.parse_request(actual)
    except ValueError as exc:  # not a body the codec reads: compare the JSON itself
        if _canonical(dict(recorded)) != _canonical(dict(actual)):
            return [f"body differs (not a {codec.name} request the harness reads: {exc})"]
        return []
    out = request_differences(old, new)
    if mode == "strict":
        a, b = _strict_rest(codec, recorded), _strict_rest(codec, actual)
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                out.append(
                    f"field {key!r} differs: recorded {_short(a.get(key))}, "
                    f"now {_short(b.get(key))}"
                )
    return out


def first_lines(differences: Sequence[str]) -> str:
    """Differences as one readable line each."""
    return "; ".join(differences)


def _check(r1: Any, r2: Any, mode: MatchMode) -> None:
    differences = body_differences(r1.method, r1.path, r2.body, r1.body, mode=mode)
    if differences:
        raise AssertionError("; ".join(differences))


def llm_semantic(r1: Any, r2: Any) -> None:
    """vcrpy matcher: LLM request bodies mean the same (other requests always match)."""
    _check(r1, r2, "semantic")


def llm_strict(r1: Any, r2: Any) -> None:
    """vcrpy matcher: LLM request bodies are the same apart from volatile fields."""
    _check(r1, r2, "strict")
