"""The Chat Completions adapter over the official ``openai`` SDK (sync and async clients).

The format itself (request body, response and chunk decoding) is
``harness.formats.openai_chat``; this module adds the SDK call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from harness.formats import openai_chat
from harness.formats._history import WireHistory
from harness.loop import ModelCapabilities, ModelRequest, ModelResponse
from harness.models._openai._base import OpenAIAdapter

__all__ = ["OPENAI_CHAT_CAPABILITIES", "OpenAIChatModel"]

OPENAI_CHAT_CAPABILITIES = ModelCapabilities(
    supports_dynamic_tools=True,
    parallel_tool_calls=True,
    streaming=True,
    structured_output=True,
    allowed_tools=True,
)
"""What the Chat Completions API supports."""

_TRUSTED = frozenset({openai_chat.HISTORY_KEY})  # built from validated messages: plain JSON


class OpenAIChatModel(OpenAIAdapter):
    """A real model behind the Chat Completions API, through the official ``openai`` SDK.

    Works with any OpenAI-compatible ``base_url``. Give a sync client for ``run``,
    an async one for ``arun`` (a sync client also works there, in a worker thread).
    SDK errors become ``ProviderError`` (``RateLimited``, ``ProviderTimeout``, ...)
    with status, retry-after and code; credentials never appear in messages. An answer
    that cannot be read (empty, cut short, not JSON, or more than ``max_response_bytes``
    once decompressed) is a ``MalformedResponse``.
    """

    json_stream_events = True  # openai_chat.response_from_events reads the chunks' JSON

    default_capabilities = OPENAI_CHAT_CAPABILITIES
    answer_kind = "a chat completion object"

    _history: WireHistory | None = None

    def params(self, request: ModelRequest) -> dict[str, Any]:
        """The SDK call's keyword arguments for ``request``."""
        if self._history is None:
            self._history = WireHistory()
        return openai_chat.request_body(
            request,
            model=self.model,
            stream=self.stream,
            defaults=self.defaults,
            history=self._history,
        )

    def end_run(self, *, completed: bool) -> None:
        if self._history is not None:
            self._history.clear()

    def _resource(self, client: Any) -> Any:
        return client.chat.completions

    def _encoded(self, params: Mapping[str, Any]) -> dict[str, str] | None:
        key = openai_chat.HISTORY_KEY
        text = self._history.encoded(params.get(key)) if self._history else None
        return None if text is None else {key: text}

    def _wire_exact(self) -> tuple[frozenset[str], Any]:
        from openai.types.chat.completion_create_params import CompletionCreateParamsBase

        own = type(self).params is OpenAIChatModel.params
        return (_TRUSTED if own else frozenset()), CompletionCreateParamsBase

    def _read(self, result: Any) -> ModelResponse:
        return openai_chat.response_from_body(result)

    def _read_stream(self, events: Iterable[Any]) -> ModelResponse:
        return openai_chat.response_from_events(events)
