"""Loop options every fuzzed run is held to, whichever kind of fuzzing made it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FUZZ_DEFAULTS"]

FUZZ_DEFAULTS: Mapping[str, Any] = {"pending_completions": "lost", "parallel_tool_calls": False}
"""Loop options the fuzzer sets when the agent's factory leaves them at their default:
async calls still running when the model answers are recorded as lost at once (no
end-of-run wait: the fuzzer does not wait 30 s per example), and the calls of one turn
run one after another, in order (threads racing would make the same example behave
differently on replay, and shrinking needs it to repeat)."""
