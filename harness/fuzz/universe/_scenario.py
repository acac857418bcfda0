"""A generated fuzz scenario as data: universe, decisions, capability and limits."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from harness.fuzz.universe._decisions import FuzzDecision
from harness.fuzz.universe._specs import UniverseSpec

__all__ = ["FuzzScenario"]


class FuzzScenario(BaseModel):
    """Everything one fuzzed run needs; plain data, so it can be stored and replayed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    universe: UniverseSpec
    """The tools and the strategies that change them."""
    decisions: list[FuzzDecision] = Field(default_factory=list)
    """What the model does, turn by turn (by index into the offered tools)."""
    static_tools: bool = False
    """The model cannot take a different tool list mid-conversation (restart path)."""
    max_iterations: int = 20
    """The loop's iteration limit."""
    prompt: str = "Use the tools to help me."
    """The user's message."""
