"""The model interface the loop talks to: requests, responses, capabilities."""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, overload

from harness.messages import AssistantMessage, Message
from harness.tools._definitions import ToolChoice, ToolDefinition

__all__ = [
    "FinishReason",
    "HistoryView",
    "Model",
    "ModelCapabilities",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "Usage",
]

FinishReason = Literal["stop", "tool_calls", "length", "content_filter"]

ToolHistoryRule = Literal["free", "tools_defined", "tools_declared"]
"""What a provider requires of ``tools`` once the history holds tool calls and results."""


class HistoryView(Sequence[Message]):
    """A read-only view of the first ``length`` messages of a growing history (no copy)."""

    __slots__ = ("_items", "_length")

    def __init__(self, items: list[Message], length: int | None = None) -> None:
        self._items = items
        self._length = len(items) if length is None else length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):
            return self._items[: self._length][index]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("history index out of range")
        return self._items[index]

    def __iter__(self) -> Iterator[Message]:
        items = self._items
        for i in range(self._length):
            yield items[i]

    def __repr__(self) -> str:
        return f"HistoryView({self._length} messages)"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ModelSettings:
    """Per-request settings the loop passes to the model."""

    tool_choice: ToolChoice | None = None
    """Which tools the model may or must call (``None`` leaves the provider's default).
    Given as a string (``auto``, ``none``, ``required`` or a tool name), it is read with
    ``ToolChoice.of``."""
    parallel_tool_calls: bool | None = None
    """Whether the model may call several tools at once; ``None`` leaves the default."""
    output_schema: Mapping[str, Any] | None = None
    """JSON Schema of the structured output, when the run asks for one."""
    output_name: str | None = None
    """A name for the output schema (used by ``response_format``)."""
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Provider-specific settings (temperature, max_tokens, ...)."""

    def __post_init__(self) -> None:
        if self.tool_choice is not None and not isinstance(self.tool_choice, ToolChoice):
            object.__setattr__(self, "tool_choice", ToolChoice.of(self.tool_choice))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequest:
    """Everything a model sees on one turn."""

    messages: Sequence[Message]
    """The history so far (a read-only view; do not keep it past the run)."""
    tools: Sequence[ToolDefinition]
    """Offered tool definitions (each format module turns them into its API's shape)."""
    tool_names: tuple[str, ...]
    """Offered tool names, in order."""
    settings: ModelSettings
    """Request settings."""
    iteration: int
    """The loop iteration (1-based)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token usage of one response (or a sum)."""

    input_tokens: int = 0
    """All input tokens, cached ones included."""
    output_tokens: int = 0
    total_tokens: int = 0
    cache_read_tokens: int = 0
    """Input tokens read from the provider's prompt cache (part of ``input_tokens``)."""
    cache_write_tokens: int = 0
    """Input tokens written to the provider's prompt cache (part of ``input_tokens``)."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )

    def __sub__(self, other: Usage) -> Usage:
        """What was used since ``other`` (an earlier sum), e.g. one turn of a session."""
        return Usage(
            input_tokens=self.input_tokens - other.input_tokens,
            output_tokens=self.output_tokens - other.output_tokens,
            total_tokens=self.total_tokens - other.total_tokens,
            cache_read_tokens=self.cache_read_tokens - other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens - other.cache_write_tokens,
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ModelResponse:
    """One model turn."""

    message: AssistantMessage
    """The assistant message (text and/or tool calls)."""
    finish_reason: FinishReason = "stop"
    """Why the model stopped."""
    usage: Usage = dataclasses.field(default_factory=Usage)
    """Token usage."""
    model_name: str | None = None
    """The model that answered, when known."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ModelCapabilities:
    """What a model (provider) supports; the loop adapts instead of special-casing."""

    supports_dynamic_tools: bool = True
    """Accepts a different tool list on each request of one conversation."""
    parallel_tool_calls: bool = True
    """Can emit several tool calls in one turn."""
    streaming: bool = False
    """Can stream responses."""
    structured_output: bool = True
    """Honours a JSON-schema response format."""
    tool_search: tuple[str, ...] = ()
    """The tool searches the provider runs or accepts natively (``ToolDefinition.search``
    values: ``regex``, ``bm25``, ``hosted``, ``client``), with deferred loading: Anthropic
    Messages ``("regex", "bm25", "client")``, OpenAI Responses ``("hosted", "client")``,
    none for Chat Completions (``ToolSearch`` then answers a local search and the format
    sends a found tool from the next request on)."""
    allowed_tools: bool = False
    """Takes an allowed subset in ``tool_choice`` (both OpenAI APIs), keeping ``tools``."""
    tool_additions: bool = False
    """Takes tools added mid-conversation by a message, leaving ``tools`` and the earlier
    prefix (so the prompt cache) untouched: OpenAI Responses' ``additional_tools`` input
    item, Anthropic's ``role: "system"`` message of ``tool_addition`` blocks. Strategies
    delivering ``via="addition"`` fall back to editing ``tools`` where it is false
    (``harness.injection.Delivery``); a format adds it by declaring it, nothing else."""
    tool_history: ToolHistoryRule = "free"
    """What the provider demands of ``tools`` when the history holds tool calls: ``free``
    (nothing, OpenAI), ``tools_defined`` (at least one tool must be declared, Anthropic),
    ``tools_declared`` (every tool the history called must still be declared: strict proxies
    and some models). Adapters that honour it keep requests valid after a strategy removed
    tools (see ``harness.models.ToolHistoryPolicy``)."""


class Model(ABC):
    """A model the loop can call: fakes and real adapters subclass this.

    Implement ``request`` (sync); override ``arequest`` for real async I/O.
    """

    name: str = "model"
    capabilities: ModelCapabilities = ModelCapabilities()

    @abstractmethod
    def request(self, request: ModelRequest) -> ModelResponse:
        """Answer one request."""

    async def arequest(self, request: ModelRequest) -> ModelResponse:
        """Answer one request from async code (default: the sync ``request``)."""
        return self.request(request)

    def end_run(self, *, completed: bool) -> None:
        """Called once when a run ends (``completed`` is false when it raised)."""
        return None
