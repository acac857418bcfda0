"""The Responses API adapter over the official ``openai`` SDK, stateless.

Every turn sends the full input, with the reasoning items the model returned before
earlier tool calls (kept by the adapter for the run). The format itself is
``harness.formats.openai_responses``; this module adds the SDK call and the memory of
reasoning items.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from harness.formats import openai_responses
from harness.formats._history import WireHistory
from harness.formats.openai_responses import ReasoningKey
from harness.loop import ModelCapabilities, ModelRequest, ModelResponse
from harness.models._http import DEFAULT_MAX_RESPONSE_BYTES
from harness.models._openai._base import OpenAIAdapter

if TYPE_CHECKING:
    import openai
    from openai.types.responses import Response

__all__ = ["OPENAI_RESPONSES_CAPABILITIES", "OpenAIResponsesModel"]

OPENAI_RESPONSES_CAPABILITIES = ModelCapabilities(
    supports_dynamic_tools=True,
    parallel_tool_calls=True,
    streaming=True,
    structured_output=True,
    tool_search=("hosted", "client"),
    allowed_tools=True,
    tool_additions=True,
)
"""What the Responses API supports."""

_TRUSTED = frozenset({openai_responses.HISTORY_KEY})  # built from validated messages: plain JSON


class OpenAIResponsesModel(OpenAIAdapter):
    """A real model behind the Responses API (stateless), through the official SDK.

    Each request sends the whole conversation (``store=False``); reasoning items
    returned by reasoning models are kept for the run and sent back in place. Errors
    and unreadable answers are typed as for ``OpenAIChatModel``.
    """

    default_capabilities = OPENAI_RESPONSES_CAPABILITIES
    answer_kind = "a response object"
    json_stream_events = True  # final_response reads the events' JSON

    def __init__(
        self,
        client: openai.OpenAI | openai.AsyncOpenAI,
        model: str = "gpt-4o-mini",
        *,
        stream: bool = False,
        defaults: Mapping[str, Any] | None = None,
        include_reasoning: bool = True,
        capabilities: ModelCapabilities | None = None,
        name: str | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        super().__init__(
            client,
            model,
            stream=stream,
            defaults=defaults,
            capabilities=capabilities,
            name=name,
            max_response_bytes=max_response_bytes,
        )
        self.include_reasoning = include_reasoning
        self._reasoning: dict[ReasoningKey, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._history = WireHistory()

    def params(self, request: ModelRequest) -> dict[str, Any]:
        """The SDK call's keyword arguments for ``request``."""
        with self._lock:
            reasoning = dict(self._reasoning)
        return openai_responses.request_body(
            request,
            model=self.model,
            stream=self.stream,
            defaults=self.defaults,
            reasoning=reasoning,
            include_reasoning=self.include_reasoning,
            history=self._history,
        )

    def _resource(self, client: Any) -> Any:
        return client.responses

    def _encoded(self, params: Mapping[str, Any]) -> dict[str, str] | None:
        key = openai_responses.HISTORY_KEY
        text = self._history.encoded(params.get(key))
        return None if text is None else {key: text}

    def _wire_exact(self) -> tuple[frozenset[str], Any]:
        from openai.types.responses.response_create_params import ResponseCreateParamsBase

        own = type(self).params is OpenAIResponsesModel.params
        return (_TRUSTED if own else frozenset()), ResponseCreateParamsBase

    def _read(self, result: Any) -> ModelResponse:
        response: Response = result
        model_response = openai_responses.response_from_body(response)
        items = openai_responses.reasoning_items(response)
        if items:
            key = openai_responses.message_key(model_response.message)
            with self._lock:
                replaced = key in self._reasoning
                self._reasoning[key] = items
            if replaced:  # a remembered turn may carry other items now: convert afresh
                self._history.clear()
        return model_response

    def _read_stream(self, events: Iterable[Any]) -> ModelResponse:
        return self._read(openai_responses.final_response(events))

    def end_run(self, *, completed: bool) -> None:
        with self._lock:
            self._reasoning.clear()
        self._history.clear()
