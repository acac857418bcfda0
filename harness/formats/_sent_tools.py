"""Which tools a request sends to a provider with no deferred loading (Chat Completions,
Gemini): a deferred tool is sent from the request after a search or an addition revealed
it (the ``tools`` array grows there, which breaks a prompt cache); one nothing reveals is
never sent."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from harness.loop import ModelRequest
from harness.loop._tool_states import ToolStateTracker
from harness.messages import SystemMessage
from harness.tools._definitions import ToolDefinition

__all__ = ["sent_tools"]


def sent_tools(request: ModelRequest) -> Sequence[ToolDefinition]:
    """The tools ``request`` sends (see the module): its tools when none is deferred."""
    tools = request.tools
    added = any(isinstance(m, SystemMessage) and m.tools for m in request.messages)
    if not added and not any(t.defer_loading for t in tools):
        return tools
    tracker = ToolStateTracker()
    states = tracker.states(request)
    by_name = {t.name: t for t in tools}
    sent: list[ToolDefinition] = []
    for name in (*states.visible, *states.search):
        definition = by_name.get(name) or tracker.added_definition(name)
        if definition is not None:
            sent.append(
                dataclasses.replace(definition, defer_loading=False)
                if definition.defer_loading
                else definition
            )
    return sent
