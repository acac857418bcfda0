"""What the core's helpers read of a run: ``RunView``, a narrow view of the ``LoopCore``.

Applying a toolset change (harness/loop/_changes.py) and keeping a session's user turns
(harness/loop/_turns.py) need the run's history, toolset, counters and event sink, not
the core's protocol or its phase. They take a ``RunView``; a ``LoopCore`` is one, and
so is any object with these attributes (tests drive the helpers with a plain one).
"""

from __future__ import annotations

from typing import Any, Protocol

from harness.loop._events import Event
from harness.loop._model import ModelCapabilities, Usage
from harness.loop._writes import HistoryWrites
from harness.messages import Message
from harness.tools import Toolset

__all__ = ["RunView"]


class RunView(Protocol):
    """A run as its helpers see it: read-only attributes (lists and dicts are changed in
    place: a helper appends to ``messages``, never replaces it) and one way to emit."""

    @property
    def messages(self) -> list[Message]:
        """The history, appended to in place."""

    @property
    def toolset(self) -> Toolset:
        """The tools offered now; only a toolset change alters them."""

    @property
    def state(self) -> dict[str, Any]:
        """The run's shared state (the blackboard)."""

    @property
    def run_id(self) -> str:
        """The run's id, for log lines."""

    @property
    def iteration(self) -> int:
        """The current iteration (1-based; 0 before the first request)."""

    @property
    def called(self) -> dict[str, int]:
        """Successful calls per tool name in the run."""

    @property
    def injected(self) -> list[str]:
        """Names of the tools strategies injected after the first request, in order."""

    @property
    def usage(self) -> Usage:
        """Tokens used by the run so far."""

    @property
    def capabilities(self) -> ModelCapabilities:
        """What the run's model supports."""

    @property
    def writes(self) -> HistoryWrites:
        """What waits to be written into the history before the next request, and the
        tools an addition made callable without declaring them."""

    def emit(self, event: Event) -> None:
        """Record ``event`` in the trace and deliver it to the observers."""
