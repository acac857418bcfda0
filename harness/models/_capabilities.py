"""Capability wrappers: override what a model declares; simulate a static-tools provider;
what each wire format's adapter declares, by the format's name (``format_capabilities``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from harness._errors import StaticToolsChanged, UsageError
from harness.loop import Model, ModelCapabilities, ModelRequest, ModelResponse
from harness.messages import Message

__all__ = ["CapabilitiesOverride", "StaticToolsModel", "format_capabilities", "with_capabilities"]

FORMAT_NAMES = (
    "openai-chat",
    "openai-responses",
    "anthropic-messages",
    "bedrock-converse",
    "gemini-generate",
)
"""The wire formats whose adapters declare capabilities (``harness.formats`` names)."""


def format_capabilities(format_name: str) -> ModelCapabilities:
    """What the adapter of ``format_name`` declares (``OPENAI_CHAT_CAPABILITIES``, ...):
    for a model that plays a format without being its adapter (the cassette model
    replaying a recording, a scripted model standing for a provider), so a strategy picks
    the native tools it would pick through the adapter. ``UsageError`` for another name."""
    if format_name == "openai-chat":
        from harness.models._openai._chat import OPENAI_CHAT_CAPABILITIES

        return OPENAI_CHAT_CAPABILITIES
    if format_name == "openai-responses":
        from harness.models._openai._responses import OPENAI_RESPONSES_CAPABILITIES

        return OPENAI_RESPONSES_CAPABILITIES
    if format_name == "anthropic-messages":
        from harness.models._anthropic._model import ANTHROPIC_CAPABILITIES

        return ANTHROPIC_CAPABILITIES
    if format_name == "bedrock-converse":
        from harness.models._bedrock._model import BEDROCK_CAPABILITIES

        return BEDROCK_CAPABILITIES
    if format_name == "gemini-generate":
        from harness.models._gemini._model import GEMINI_CAPABILITIES

        return GEMINI_CAPABILITIES
    raise UsageError(
        f"no adapter capabilities for the format {format_name!r}; known: "
        + ", ".join(repr(n) for n in FORMAT_NAMES)
    )


class _Wrapper(Model):
    """Delegates everything to ``inner``."""

    def __init__(self, inner: Model) -> None:
        if not isinstance(inner, Model):
            raise UsageError(f"expected a harness Model to wrap, got {inner!r}")
        self.inner = inner
        self.name = inner.name

    def request(self, request: ModelRequest) -> ModelResponse:
        return self.inner.request(request)

    async def arequest(self, request: ModelRequest) -> ModelResponse:
        return await self.inner.arequest(request)

    def end_run(self, *, completed: bool) -> None:
        self.inner.end_run(completed=completed)


class CapabilitiesOverride(_Wrapper):
    """``inner`` with some declared capabilities changed (see ``with_capabilities``)."""

    def __init__(self, inner: Model, capabilities: ModelCapabilities) -> None:
        super().__init__(inner)
        self.capabilities = capabilities

    def __repr__(self) -> str:
        return f"CapabilitiesOverride({self.inner!r}, {self.capabilities!r})"


def with_capabilities(model: Model, **changes: Any) -> Model:
    """``model`` declaring other capabilities, e.g. ``with_capabilities(m, streaming=False)``."""
    valid = {f.name for f in dataclasses.fields(ModelCapabilities)}
    unknown = sorted(set(changes) - valid)
    if unknown:
        raise UsageError(f"unknown capabilities {unknown}; valid names are {sorted(valid)}")
    return CapabilitiesOverride(model, dataclasses.replace(model.capabilities, **changes))


class StaticToolsModel(_Wrapper):
    """Simulates a provider whose tools are configured once per session.

    Like an SDK that sets up an MCP server before the query: it declares
    ``supports_dynamic_tools=False`` and raises ``StaticToolsChanged`` when a
    request in the same session offers another tool list. A session starts with
    the first request, after ``end_run``, or when the history no longer extends
    the previous one (the loop restarted the conversation).
    """

    def __init__(self, inner: Model) -> None:
        super().__init__(inner)
        # tools set once per session: no mid-conversation additions either
        self.capabilities = dataclasses.replace(
            inner.capabilities, supports_dynamic_tools=False, tool_additions=False
        )
        self._tools: tuple[str, ...] | None = None
        self._history: list[Message] = []
        self.sessions = 0
        """How many sessions have started (a restart starts a new one)."""

    def __repr__(self) -> str:
        return f"StaticToolsModel({self.inner!r})"

    def _check(self, request: ModelRequest) -> None:
        messages = list(request.messages)
        continues = (
            self._tools is not None
            and len(messages) > len(self._history)
            and messages[: len(self._history)] == self._history
        )
        if not continues:
            self._tools = tuple(request.tool_names)
            self.sessions += 1
        elif tuple(request.tool_names) != self._tools:
            before, now = set(self._tools or ()), set(request.tool_names)
            raise StaticToolsChanged(
                "this provider configures its tools once per session, but the tool list "
                f"changed: added={sorted(now - before)!r}, removed={sorted(before - now)!r}. "
                "Restart the conversation with the new tools (the loop does this when "
                "capabilities.supports_dynamic_tools is False).",
                status=400,
                code="static_tools_changed",
                retryable=False,
            )
        self._history = messages

    def request(self, request: ModelRequest) -> ModelResponse:
        self._check(request)
        return self.inner.request(request)

    async def arequest(self, request: ModelRequest) -> ModelResponse:
        self._check(request)
        return await self.inner.arequest(request)

    def end_run(self, *, completed: bool) -> None:
        self._tools = None
        self._history = []
        self.inner.end_run(completed=completed)
