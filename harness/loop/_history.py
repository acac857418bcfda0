"""A history given by the caller, checked before it is sent: every tool call answered.

A history a run starts from (``run(model, [messages])``, ``Session(messages=...)``) or a
turn's messages (``Session.send([...])``) must keep the rule every provider enforces
with a 400: each ``ToolMessage`` answers a call of the assistant message just before it
(one answer per call), and each call of an assistant message is answered before the
conversation goes on. A history that breaks it is the caller's mistake: a
``UsageError`` names the message and the fix before anything is sent. System messages
(instructions, tool additions) do not take part.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness._errors import UsageError
from harness.messages import AssistantMessage, Message, SystemMessage, ToolMessage

__all__ = ["check_history"]


def _unanswered(where: str, pending: dict[str, str], opened: int) -> UsageError:
    calls = ", ".join(f"{name} (id {call_id!r})" for call_id, name in pending.items())
    return UsageError(
        f"{where}: message {opened + 1} (an assistant message) calls {calls}, which no "
        "ToolMessage answers before the conversation goes on; add a ToolMessage with each "
        "call's tool_call_id right after it, or leave the call out"
    )


def check_history(messages: Sequence[Message], *, where: str) -> None:
    """``UsageError`` (naming ``where`` and the message, numbered from 1) when a tool
    message answers no pending call or a call is left unanswered."""
    pending: dict[str, str] = {}
    opened = 0
    for index, message in enumerate(messages):
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, ToolMessage):
            if message.tool_call_id not in pending:
                raise UsageError(
                    f"{where}: message {index + 1} (a ToolMessage for call "
                    f"{message.tool_call_id!r}) answers no call: a tool message answers a "
                    "call of the assistant message just before it, once; leave it out, or "
                    "put the assistant message that made the call before it"
                )
            del pending[message.tool_call_id]
            continue
        if pending:
            raise _unanswered(where, pending, opened)
        if isinstance(message, AssistantMessage) and message.tool_calls:
            pending = {call.id: call.name for call in message.tool_calls}
            opened = index
    if pending:
        raise _unanswered(where, pending, opened)
