"""Context objects the harness defines: the progress ``Emitter`` and the ``ChatContext``."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable

from harness._errors import UsageError
from harness._secrets import REDACTED
from harness.tools._inject import context_type

__all__ = ["ChatContext", "Emitter", "ProgressSink"]

ProgressSink = Callable[[str, str, str], None]
"""``sink(call_id, tool_name, text)``: delivers one progress chunk to the user channel;
raises ``UsageError`` when the call has already returned."""


@context_type
class Emitter:
    """Streams progress chunks from a running tool to the user channel.

    Annotate a parameter ``progress: Emitter`` and the loop passes one made for the
    call: each ``emit(text)`` becomes, at once and in order, a ``UserNotified`` event with
    ``progress=True`` and the call's id, and an entry of ``RunResult.user_outputs``. The
    model never sees the chunks. Blank chunks are not delivered (as blank ``user_content``
    is not). Once the call has returned, ``emit`` raises ``UsageError``: progress belongs
    to a running call. Outside a loop (a tool called directly) the chunks are only kept in
    ``sent``. Safe to use from several threads.
    """

    __slots__ = ("_lock", "_sent", "_sink", "call_id", "tool_name")

    def __init__(
        self, *, call_id: str = "", tool_name: str = "", sink: ProgressSink | None = None
    ) -> None:
        self.call_id = call_id
        """The id of the call this emitter belongs to."""
        self.tool_name = tool_name
        """The tool being called."""
        self._sink = sink
        self._sent: list[str] = []
        self._lock = threading.Lock()

    @property
    def sent(self) -> tuple[str, ...]:
        """The chunks delivered so far, in order."""
        return tuple(self._sent)

    def emit(self, text: str) -> None:
        """Send ``text`` to the user now (blank text is ignored)."""
        if not isinstance(text, str):
            raise UsageError(
                f"Emitter.emit takes text (str), got {type(text).__name__}; "
                "format the progress as a string first"
            )
        if not text.strip():
            return
        with self._lock:
            if self._sink is not None:
                self._sink(self.call_id, self.tool_name, text)
            self._sent.append(text)

    __call__ = emit

    def __repr__(self) -> str:
        return f"Emitter(call_id={self.call_id!r}, tool={self.tool_name!r}, sent={len(self._sent)})"


@context_type
@dataclasses.dataclass(frozen=True)
class ChatContext:
    """Where the conversation happens: the channel and the chat (set per run).

    Register one on the run (``run(..., context_objects=[ChatContext(channel="slack",
    chat_id="C024BE91L")])``) and tools annotated ``chat: ChatContext`` receive it, so a
    "send a message to the current chat" tool needs no chat id from the model. The ids
    are kept from the schema and from the ``repr``, but they are not secrets: a tool may
    answer ``sent to slack/C024BE91L`` (a ``Secret(...)`` id is hidden wherever text is
    shown).
    """

    channel: str
    """The messaging channel or platform (``"slack"``, ``"telegram"``, ``"web"``...)."""
    chat_id: str
    """The conversation's id on that channel."""
    thread_id: str | None = None
    """A thread inside the chat, if any."""

    def __post_init__(self) -> None:
        problems = []
        for name in ("channel", "chat_id"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                problems.append(f"{name} must be a non-empty string, got {type(value).__name__}")
        if self.thread_id is not None and not isinstance(self.thread_id, str):
            problems.append(f"thread_id must be a string or None, got {type(self.thread_id)}")
        if problems:
            raise UsageError("invalid ChatContext: " + "; ".join(problems))

    def __repr__(self) -> str:
        thread = f", thread_id={REDACTED!r}" if self.thread_id else ""
        return f"ChatContext(channel={self.channel!r}, chat_id={REDACTED!r}{thread})"
