"""The callback model: a function of the request decides every response."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from harness._errors import UsageError
from harness.loop import Model, ModelCapabilities, ModelRequest, ModelResponse
from harness.messages import AssistantMessage

__all__ = ["CallbackModel", "CallbackResult"]

CallbackResult = ModelResponse | AssistantMessage | str
"""What a callback may return: a full response, an assistant message, or answer text."""

Callback = Callable[[ModelRequest], CallbackResult | Awaitable[CallbackResult]]


class CallbackModel(Model):
    """A fake model whose responses come from ``function(request)``.

    The function gets the ``ModelRequest`` (history in ``messages``, offered tool
    definitions in ``tools``, ``settings``) and returns a ``ModelResponse``, an
    ``AssistantMessage`` (tool calls give finish reason ``tool_calls``) or a plain
    string (a text answer). It may be sync or ``async``: ``arequest`` awaits it on
    the running loop, ``request`` runs an async function on a private event loop.
    Every request is kept in ``requests``.
    """

    __test__ = False

    def __init__(
        self,
        function: Callback,
        *,
        name: str = "callback",
        capabilities: ModelCapabilities | None = None,
    ) -> None:
        if not callable(function):
            raise UsageError(
                f"CallbackModel needs a function of the request, got {function!r}; "
                "pass e.g. lambda request: 'done'"
            )
        self.function = function
        self.name = name
        if capabilities is not None:
            self.capabilities = capabilities
        self.requests: list[ModelRequest] = []
        """Every request seen, in order."""

    def request(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        got = self.function(request)
        if inspect.isawaitable(got):
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return self._convert(asyncio.run(_await(got)))
            _close(got)
            raise UsageError(
                "CallbackModel.request() was called inside a running event loop with an async "
                "function; use harness.arun(...) (which calls arequest) instead of run(...)"
            )
        return self._convert(got)

    async def arequest(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        got = self.function(request)
        if inspect.isawaitable(got):
            got = await got
        return self._convert(got)

    def _convert(self, got: Any) -> ModelResponse:
        if isinstance(got, ModelResponse):
            return got
        if isinstance(got, AssistantMessage):
            return ModelResponse(
                message=got,
                finish_reason="tool_calls" if got.tool_calls else "stop",
                model_name=self.name,
            )
        if isinstance(got, str):
            return ModelResponse(message=AssistantMessage(content=got), model_name=self.name)
        raise UsageError(
            f"the CallbackModel function {_describe(self.function)} returned "
            f"{type(got).__name__}: {got!r}; return a ModelResponse, an AssistantMessage "
            "or a str"
        )


async def _await(value: Awaitable[Any]) -> Any:
    return await value


def _close(value: Awaitable[Any]) -> None:
    close = getattr(value, "close", None)
    if callable(close):
        close()


def _describe(function: Any) -> str:
    return str(getattr(function, "__qualname__", None) or repr(function))
