"""Model behaviour as decisions that name offered tools by index, and the model that plays them.

An index is taken modulo the number of offered tools, so every decision list is
valid for every toolset, and shrinking a list never makes it meaningless. While it
plays, the model writes down the concrete scripted steps it produced (names, ids,
raw arguments): a counterexample replays them with an ordinary ``ScriptedModel``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from harness.messages import AssistantMessage, ToolCall
from harness.models import (
    Model,
    ModelRequest,
    ModelResponse,
    ScriptedModel,
    StaticToolsModel,
    raise_error,
)
from harness.tools import ToolDefinition

__all__ = [
    "DECISION_KINDS",
    "UNKNOWN_TOOL",
    "DecisionModel",
    "FuzzDecision",
    "example_arguments",
    "static_tools_model",
]

DecisionKind = Literal[
    "call", "answer", "parallel", "unknown", "repeat_id", "recall", "provider_error"
]
DECISION_KINDS: tuple[str, ...] = (
    "call",
    "answer",
    "parallel",
    "unknown",
    "repeat_id",
    "recall",
    "provider_error",
)
"""What a decision can do."""

ArgsMode = Literal["valid", "empty", "malformed", "invalid"]

UNKNOWN_TOOL = "no_such_tool"
"""The name an ``unknown`` decision calls."""

ANSWER = "Done."
"""The final answer of a decision model."""


class FuzzDecision(BaseModel):
    """One model turn, relative to whatever is offered at that turn."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: DecisionKind = "call"
    index: int = 0
    """Which offered tool (modulo the number offered)."""
    more: tuple[int, ...] = ()
    """Further indexes for ``parallel`` calls."""
    args: ArgsMode = "valid"
    """Arguments: valid for the schema, ``{}``, malformed JSON, or an unexpected key."""
    status: int = 500
    """HTTP status of a ``provider_error``."""


def example_arguments(
    schema: Mapping[str, Any], index: int = 0, strings: Sequence[str] = ()
) -> dict[str, Any]:
    """Arguments valid for a tool's JSON ``schema`` (its required ones).

    ``index`` picks among enum values and among ``strings``, the candidate string
    values (e.g. quoted words of the prompt, as a model would copy them).
    """
    properties = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for name in schema.get("required") or ():
        prop = properties.get(name, {})
        out[name] = _value(prop, index, strings)
    return out


_QUOTED = re.compile(r'"([A-Za-z0-9_.\-]{1,64})"')


def quoted_words(request: ModelRequest) -> list[str]:
    """Words in double quotes in the request's messages, in order, without repeats."""
    words: dict[str, None] = {}
    for message in request.messages:
        content = getattr(message, "content", None)
        if isinstance(content, str):
            words.update(dict.fromkeys(_QUOTED.findall(content)))
    return list(words)


def _value(prop: Mapping[str, Any], index: int, strings: Sequence[str] = ()) -> Any:
    if prop.get("enum"):
        choices = list(prop["enum"])
        return choices[index % len(choices)]
    if prop.get("anyOf"):
        return _value(prop["anyOf"][0], index, strings)
    kind = prop.get("type", "string")
    if isinstance(kind, list):
        kind = kind[0] if kind else "string"
    if kind == "string" and strings:
        return strings[index % len(strings)]
    return {
        "string": "x",
        "integer": 1,
        "number": 1.5,
        "boolean": True,
        "array": [],
        "object": {},
        "null": None,
    }.get(kind, "x")


class DecisionModel(Model):
    """A fake model playing ``decisions`` against the offered tools; then it answers.

    ``steps`` holds the scripted-step data of what it did (for ``ScriptedModel``);
    ``definitions`` every distinct tool definition it was sent.
    """

    __test__ = False

    def __init__(self, decisions: Sequence[FuzzDecision], *, name: str = "decisions") -> None:
        self.decisions = list(decisions)
        self.name = name
        self.steps: list[dict[str, Any]] = []
        self.definitions: list[ToolDefinition] = []
        self.requests = 0
        self._position = 0
        self._ids = 0
        self._last_id: str | None = None
        self._last_name: str | None = None
        self._seen_tools: Sequence[ToolDefinition] | None = None
        self._strings: list[str] = []

    def request(self, request: ModelRequest) -> ModelResponse:
        self.requests += 1
        if request.tools is not self._seen_tools:
            self._seen_tools = request.tools
            self.definitions.extend(request.tools)
        if self._position >= len(self.decisions):
            self.steps.append({"reply": ANSWER})
            return ModelResponse(message=AssistantMessage(content=ANSWER))
        decision = self.decisions[self._position]
        self._position += 1
        if decision.kind == "answer":
            self.steps.append({"reply": ANSWER})
            return ModelResponse(message=AssistantMessage(content=ANSWER))
        if decision.kind == "provider_error":
            self.steps.append({"raise": {"status": decision.status}})
            raise raise_error(status=decision.status).error()
        names = request.tool_names
        self._strings = quoted_words(request)
        schemas = {d.name: d.parameters for d in request.tools}
        indexes = (
            (decision.index, *decision.more) if decision.kind == "parallel" else (decision.index,)
        )
        calls = [self._call(decision, i, names, schemas) for i in indexes]
        if len(calls) == 1:
            self.steps.append(calls[0][1])
        else:
            self.steps.append({"calls": [data for _, data in calls]})
        return ModelResponse(
            message=AssistantMessage(tool_calls=tuple(c for c, _ in calls)),
            finish_reason="tool_calls",
        )

    def _call(
        self,
        decision: FuzzDecision,
        index: int,
        names: Sequence[str],
        schemas: Mapping[str, Mapping[str, Any]],
    ) -> tuple[ToolCall, dict[str, Any]]:
        if decision.kind == "unknown" or not names:
            name = UNKNOWN_TOOL
        elif decision.kind == "recall" and self._last_name is not None:
            name = self._last_name
        else:
            name = names[index % len(names)]
        if decision.kind == "repeat_id" and self._last_id is not None:
            call_id = self._last_id
        else:
            self._ids += 1
            call_id = f"call_{self._ids}"
        args: Any
        if decision.args == "malformed":
            args = '{"broken'
        elif decision.args == "invalid":
            args = {"unexpected_argument": 1}
        elif decision.args == "empty":
            args = {}
        else:
            args = example_arguments(
                schemas.get(name, {}), index // max(len(names), 1), self._strings
            )
        self._last_id, self._last_name = call_id, name
        raw = args if isinstance(args, str) else json.dumps(args)
        return (
            ToolCall(id=call_id, name=name, arguments=raw),
            {"call": name, "args": args, "id": call_id},
        )


def static_tools_model(steps: Sequence[Any], lenient: bool) -> Model:
    """Scenario-file model factory: a scripted model on a provider without dynamic tools."""
    return StaticToolsModel(ScriptedModel(list(steps), lenient=lenient, name="scripted:static"))
