"""Reading scripted-model steps from plain data (the ``steps`` list of a YAML scenario)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness._errors import ScriptError
from harness._validation import is_int
from harness.models._scripted._expect_choice import ExpectToolChoice, tool_choice_from_data
from harness.models._scripted._refs import has_refs, resolve_refs
from harness.models._scripted._steps import (
    CALL_FINISH_REASONS,
    TEXT_FINISH_REASONS,
    CallsStep,
    CallStep,
    OutputStep,
    RaiseStep,
    RefuseStep,
    ReplyStep,
    Step,
    expect_message,
    expect_offered,
    parse_finish,
    parse_usage,
    raise_error,
    search,
)

__all__ = ["step_from_data", "steps_from_data"]


_STEP_KEYS = (
    "call",
    "search",
    "calls",
    "reply",
    "output",
    "expect_offered",
    "expect_message",
    "expect_tool_choice",
    "refuse",
    "raise",
)
_EXTRA_KEYS: dict[str, frozenset[str]] = {
    "call": frozenset({"args", "arguments", "id", "rank", "usage", "finish_reason"}),
    "calls": frozenset({"usage", "finish_reason"}),
    "search": frozenset({"found", "id", "limit"}),
    "reply": frozenset({"usage", "finish_reason"}),
    "output": frozenset({"usage", "finish_reason"}),
    "refuse": frozenset({"usage"}),
    "raise": frozenset(),
    "expect_offered": frozenset(),
    "expect_message": frozenset(),
    "expect_tool_choice": frozenset(),
}


def _call_from_data(data: Any, where: str, *, inner: bool = False) -> CallStep:
    allowed = {"call", "args", "arguments", "id", "rank"} | (
        set() if inner else {"usage", "finish_reason"}
    )
    if not isinstance(data, Mapping) or "call" not in data:
        raise ScriptError(
            f"{where}: expected a mapping like {{call: name, args: {{...}}}}, got {data!r}"
        )
    unknown = set(data) - allowed
    if unknown:
        raise ScriptError(
            f"{where}: unknown keys {sorted(unknown)}; a call takes {sorted(allowed)}"
        )
    if not isinstance(data["call"], str) or not data["call"]:
        raise ScriptError(f"{where}: call must be a tool name or glob, got {data['call']!r}")
    args = data.get("args", data.get("arguments"))
    if args is not None and not isinstance(args, (Mapping, str)):
        raise ScriptError(f"{where}: args must be a mapping or a JSON string, got {args!r}")
    rank = data.get("rank")
    if rank is not None and not (is_int(rank) and rank >= 1):
        raise ScriptError(f"{where}: rank must be an int >= 1, got {rank!r}")
    if isinstance(args, Mapping) and has_refs(args):  # values from earlier results
        args = resolve_refs(args, where)
    return CallStep(
        name=str(data["call"]),
        arguments=args,
        rank=rank,
        id=data.get("id"),
        usage=parse_usage(data.get("usage"), f"{where}: usage"),
        finish_reason=parse_finish(data.get("finish_reason"), CALL_FINISH_REASONS, where),
    )


def _raise_from_data(spec: Any, where: str) -> RaiseStep:
    if isinstance(spec, str):
        spec = {"kind": spec}
    elif is_int(spec):
        spec = {"status": spec}
    if not isinstance(spec, Mapping):
        raise ScriptError(
            f"{where}: raise takes a kind ('rate_limit', 'server_error', 'timeout', "
            f"'context_length'), a status (429) or a mapping, got {spec!r}"
        )
    allowed = {"kind", "status", "retry_after", "code", "message"}
    unknown = set(spec) - allowed
    if unknown:
        raise ScriptError(f"{where}: raise: unknown keys {sorted(unknown)}; use {sorted(allowed)}")
    try:
        return raise_error(
            spec.get("kind"),
            status=spec.get("status"),
            retry_after=spec.get("retry_after"),
            code=spec.get("code"),
            message=spec.get("message"),
        )
    except ScriptError as exc:
        raise ScriptError(f"{where}: {exc}") from None


def step_from_data(data: Any, index: int = 0) -> Step:
    """Read one step from plain data, e.g. ``{"call": "x", "args": {...}}``.

    Response steps (``call``, ``calls``, ``reply``, ``output``, ``refuse``) take
    ``usage: {input_tokens: .., output_tokens: ..}``; all but ``refuse`` take
    ``finish_reason``. ``raise`` takes a kind, a status or a mapping.
    """
    where = f"step {index + 1}"
    if not isinstance(data, Mapping):
        raise ScriptError(
            f"{where}: expected a mapping with one of {list(_STEP_KEYS)}, got {data!r}"
        )
    kinds = [k for k in _STEP_KEYS if k in data]
    if len(kinds) != 1:
        raise ScriptError(
            f"{where}: expected exactly one of {list(_STEP_KEYS)}, got keys {sorted(data)}"
        )
    kind = kinds[0]
    if kind == "call":
        return _call_from_data(data, where)
    unknown = set(data) - {kind} - _EXTRA_KEYS[kind]
    if unknown:
        allowed = sorted(_EXTRA_KEYS[kind]) or "no other keys"
        raise ScriptError(
            f"{where}: unknown keys {sorted(unknown)} for {kind!r}; allowed: {allowed}"
        )
    usage = parse_usage(data.get("usage"), f"{where}: usage")
    finish = data.get("finish_reason")
    if kind == "calls":
        items = data["calls"]
        if not isinstance(items, list) or not items:
            raise ScriptError(
                f"{where}: calls must be a non-empty list of {{call: ..., args: ...}}"
            )
        return CallsStep(
            calls=tuple(
                _call_from_data(i, f"{where} call {n + 1}", inner=True) for n, i in enumerate(items)
            ),
            usage=usage,
            finish_reason=parse_finish(finish, CALL_FINISH_REASONS, where),
        )
    if kind == "search":
        query = data["search"]
        try:
            return search(
                query if isinstance(query, (str, Mapping)) else str(query),
                found=data.get("found"),
                id=data.get("id"),
                limit=data.get("limit", 5),
            )
        except ScriptError as exc:
            raise ScriptError(f"{where}: {exc}") from None
    if kind == "reply":
        return ReplyStep(
            text=str(data["reply"]),
            usage=usage,
            finish_reason=parse_finish(finish, TEXT_FINISH_REASONS, where),
        )
    if kind == "output":
        value = data["output"]
        return OutputStep(
            value=value if isinstance(value, str) else json.loads(json.dumps(value)),
            usage=usage,
            finish_reason=parse_finish(finish, TEXT_FINISH_REASONS, where),
        )
    if kind == "refuse":
        return RefuseStep(text=str(data["refuse"]), usage=usage)
    if kind == "raise":
        return _raise_from_data(data["raise"], where)
    if kind == "expect_message":
        return _expect_message_from_data(data["expect_message"], where)
    if kind == "expect_tool_choice":
        return ExpectToolChoice(
            choice=tool_choice_from_data(data["expect_tool_choice"], f"{where}: expect_tool_choice")
        )
    spec = data["expect_offered"]
    if not isinstance(spec, Mapping):
        raise ScriptError(f"{where}: expect_offered takes includes/excludes/exactly lists")
    unknown = set(spec) - {"includes", "excludes", "exactly"}
    if unknown:
        raise ScriptError(f"{where}: expect_offered: unknown keys {sorted(unknown)}")
    try:
        return expect_offered(
            spec.get("includes", ()), spec.get("excludes", ()), spec.get("exactly")
        )
    except ScriptError as exc:
        raise ScriptError(f"{where}: {exc}") from None


def _expect_message_from_data(spec: Any, where: str) -> Step:
    if isinstance(spec, str):
        spec = {"contains": spec}
    if not isinstance(spec, Mapping):
        raise ScriptError(
            f"{where}: expect_message takes a text (contained) or a mapping with "
            f"contains/tool/call_id/role, got {spec!r}"
        )
    allowed = {"contains", "tool", "call_id", "role"}
    unknown = set(spec) - allowed
    if unknown:
        raise ScriptError(
            f"{where}: expect_message: unknown keys {sorted(unknown)}; use {sorted(allowed)}"
        )
    try:
        return expect_message(
            spec.get("contains"),
            tool=spec.get("tool"),
            call_id=spec.get("call_id"),
            role=spec.get("role"),
        )
    except ScriptError as exc:
        raise ScriptError(f"{where}: {exc}") from None


def steps_from_data(items: Sequence[Any]) -> list[Step]:
    """Read a list of steps."""
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)):
        raise ScriptError(f"steps must be a list, got {items!r}")
    return [step_from_data(item, i) for i, item in enumerate(items)]
