"""Persona decisions and their exact replay."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from harness._errors import ScriptError
from harness.loop import FinishReason, Model, ModelRequest, ModelResponse
from harness.messages import AssistantMessage, ToolCall

__all__ = ["Decision", "ReplayModel"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Decision:
    """One persona turn: what it saw, what it chose and why.

    The response is stored exactly (names, raw argument strings, ids, text), so
    ``ReplayModel(decisions)`` reproduces the run without the persona's logic.
    """

    iteration: int
    """The loop iteration of the request (1-based)."""
    action: str
    """What the persona decided: ``call``, ``answer``, ``give_up`` or ``stop_early``."""
    reason: str
    """Why, in words."""
    offered: tuple[str, ...]
    """The tool names offered on the request."""
    calls: tuple[ToolCall, ...] = ()
    """The tool calls sent, exactly."""
    text: str | None = None
    """The answer text sent, if any."""
    finish_reason: FinishReason = "stop"
    """The finish reason sent."""
    quirks: tuple[str, ...] = ()
    """Weak-model behaviours applied on this turn (``invent_names``...)."""

    def response(self, model_name: str | None = None) -> ModelResponse:
        """The model response this decision produced."""
        return ModelResponse(
            message=AssistantMessage(content=self.text, tool_calls=self.calls),
            finish_reason=self.finish_reason,
            model_name=model_name,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (``from_dict`` reads it back)."""
        return {
            "iteration": self.iteration,
            "action": self.action,
            "reason": self.reason,
            "offered": list(self.offered),
            "calls": [c.model_dump() for c in self.calls],
            "text": self.text,
            "finish_reason": self.finish_reason,
            "quirks": list(self.quirks),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Decision:
        """Read a decision written by ``to_dict``."""
        try:
            return cls(
                iteration=int(data["iteration"]),
                action=str(data["action"]),
                reason=str(data.get("reason", "")),
                offered=tuple(data.get("offered", ())),
                calls=tuple(ToolCall(**c) for c in data.get("calls", ())),
                text=data.get("text"),
                finish_reason=data.get("finish_reason", "stop"),
                quirks=tuple(data.get("quirks", ())),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ScriptError(
                f"not a persona decision {dict(data)!r}: {exc}; expected the form "
                "Decision.to_dict() writes"
            ) from None


class ReplayModel(Model):
    """Plays recorded persona decisions back, exactly, one per request.

    With ``check_offered`` (the default) a request offering other tools than
    the recorded one raises ``ScriptError``: the run diverged from the recording.
    """

    __test__ = False

    def __init__(
        self,
        decisions: Sequence[Decision | Mapping[str, Any]],
        *,
        check_offered: bool = True,
        name: str = "replay",
    ) -> None:
        self.decisions = [
            d if isinstance(d, Decision) else Decision.from_dict(d) for d in decisions
        ]
        self.check_offered = check_offered
        self.name = name
        self.position = 0
        """Index of the next decision."""
        self.requests: list[ModelRequest] = []
        """Every request seen, in order."""

    def request(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if self.position >= len(self.decisions):
            raise ScriptError(
                f"replay ran out: iteration {request.iteration} asked for a response but all "
                f"{len(self.decisions)} recorded decisions were used"
            )
        decision = self.decisions[self.position]
        self.position += 1
        if self.check_offered and tuple(request.tool_names) != decision.offered:
            now, then = set(request.tool_names), set(decision.offered)
            raise ScriptError(
                f"replay diverged at decision {self.position} (iteration {request.iteration}): "
                f"recorded offered tools {list(decision.offered)}, now {list(request.tool_names)} "
                f"(new: {sorted(now - then)}, missing: {sorted(then - now)}); the tools or "
                "strategies changed since the recording, or pass check_offered=False"
            )
        return decision.response(self.name)
