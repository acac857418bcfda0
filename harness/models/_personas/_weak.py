"""Weak-model behaviours: mistakes a persona makes, each with a rate in [0, 1]."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from typing import Any

from harness._errors import UsageError
from harness._validation import is_number
from harness.messages import ToolCall
from harness.models._personas._state import RunState
from harness.models._personas._values import SchemaValues, wrong_type_value

__all__ = ["WeakBehavior"]

_STOP_TEXT = "I think I have enough to answer now."
_RENAMES = (
    ("get_", "fetch_"),
    ("list_", "get_all_"),
    ("find_", "search_"),
    ("search_", "find_"),
)
_INVENTED = ("search_everything", "get_answer", "lookup_data", "run_query", "final_answer")


@dataclasses.dataclass(frozen=True, kw_only=True)
class WeakBehavior:
    """How often a persona makes each typical weak-model mistake (0 = never, 1 = always).

    Each rate is rolled once per turn where the mistake is possible, with the
    persona's seeded random stream, so a seed reproduces the same mistakes.
    """

    recall_one_shot: float = 0.0
    """Call a tool it already called again (one-shot tools, repeated lookups)."""
    recall_unfolded: float = 0.0
    """Call a tool it called before that is no longer offered (a facade that unfolded)."""
    invent_names: float = 0.0
    """Call a tool name that is not offered (a hallucinated or misspelled name)."""
    malformed_json: float = 0.0
    """Send arguments that are not valid JSON."""
    wrong_types: float = 0.0
    """Send an argument of the wrong JSON type."""
    repeat_ids: float = 0.0
    """Reuse a tool-call id already sent."""
    multi_call: float = 0.0
    """Emit several calls in one turn."""
    stop_early: float = 0.0
    """Answer before its plan is finished."""

    def __post_init__(self) -> None:
        bad = []
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not is_number(value) or not 0.0 <= value <= 1.0:
                bad.append(f"{field.name}={value!r}")
        if bad:
            raise UsageError(
                f"WeakBehavior rates must be numbers in [0, 1], got {', '.join(bad)}; "
                "use 0 for never and 1 for always"
            )

    @classmethod
    def all(cls, rate: float) -> WeakBehavior:
        """Every behaviour at the same ``rate``."""
        return cls(**{f.name: rate for f in dataclasses.fields(cls)})

    @property
    def active(self) -> bool:
        """Whether any rate is above zero."""
        return any(getattr(self, f.name) > 0 for f in dataclasses.fields(self))

    def apply(
        self,
        calls: list[ToolCall],
        state: RunState,
        rng: random.Random,
        values: SchemaValues,
        new_id: Callable[[], str],
    ) -> tuple[list[ToolCall] | None, tuple[str, ...]]:
        """Spoil the planned ``calls``; ``None`` means answer now (stop early)."""
        quirks: list[str] = []

        def roll(name: str, possible: bool = True) -> bool:
            rate = float(getattr(self, name))
            if possible and rate > 0 and rng.random() < rate:
                quirks.append(name)
                return True
            return False

        if roll("stop_early"):
            return None, tuple(quirks)
        calls = list(calls)
        offered = set(state.offered)
        gone = [n for n in state.removed if n not in offered]
        again = [n for n in state.called if n in offered]
        if roll("recall_unfolded", bool(gone)):
            name = rng.choice(gone)
            calls[0] = calls[0].model_copy(
                update={"name": name, "arguments": state.last_arguments.get(name, "{}")}
            )
        elif roll("recall_one_shot", bool(again)):
            name = rng.choice(again)
            calls[0] = calls[0].model_copy(
                update={"name": name, "arguments": state.last_arguments.get(name, "{}")}
            )
        if roll("invent_names"):
            calls[0] = calls[0].model_copy(update={"name": _invent(calls[0].name, offered, rng)})
        if roll("multi_call", bool(offered)):
            busy = {c.name for c in calls}
            fresh = [n for n in state.offered if n not in busy and n not in state.called]
            pool = fresh or [n for n in state.offered if n not in busy] or list(state.offered)
            for name in rng.sample(pool, min(len(pool), 1 + rng.randrange(2))):
                arguments = values.generate(state.schemas.get(name, {}), rng)
                calls.append(ToolCall(id=new_id(), name=name, arguments=json.dumps(arguments)))
        if roll("wrong_types"):
            index = rng.randrange(len(calls))
            calls[index] = _wrong_types(calls[index], state, rng)
        if roll("malformed_json"):
            index = rng.randrange(len(calls))
            calls[index] = calls[index].model_copy(
                update={"arguments": _malform(calls[index].arguments, rng)}
            )
        earlier = state.ids or ([calls[0].id] if len(calls) > 1 else [])
        if roll("repeat_ids", bool(earlier)):
            index = len(calls) - 1
            calls[index] = calls[index].model_copy(update={"id": rng.choice(earlier)})
        return calls, tuple(quirks)


def _invent(name: str, offered: set[str], rng: random.Random) -> str:
    candidates = []
    for old, new in _RENAMES:
        if name.startswith(old):
            candidates.append(new + name[len(old) :])
    candidates.extend([name + "s", name + "_v2", "get_" + name, *_INVENTED])
    valid = [c[:64] for c in candidates if c[:64] not in offered]
    return rng.choice(valid) if valid else f"invented_tool_{rng.randrange(10**6)}"


def _wrong_types(call: ToolCall, state: RunState, rng: random.Random) -> ToolCall:
    schema = state.schemas.get(call.name, {})
    properties = schema.get("properties") if isinstance(schema, dict) else None
    try:
        args: Any = json.loads(call.arguments)
    except ValueError:
        args = None
    if not properties or not isinstance(args, dict):
        return call.model_copy(update={"arguments": json.dumps(["not", "an", "object"])})
    name = rng.choice(sorted(properties))
    args = {**args, name: wrong_type_value(properties[name])}
    return call.model_copy(update={"arguments": json.dumps(args)})


def _malform(arguments: str, rng: random.Random) -> str:
    variant = rng.randrange(3)
    if variant == 0:
        return arguments[:-1] if len(arguments) > 1 else "{"
    if variant == 1:
        return arguments.replace('"', "'") if '"' in arguments else "{'broken': }"
    return arguments.rstrip("}") + ",}" if arguments.endswith("}") else arguments + "}}"
