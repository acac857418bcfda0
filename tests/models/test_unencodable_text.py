"""Text no provider accepts (a lone surrogate) is a typed error naming where it is.

The SDKs write request bodies as UTF-8 JSON; a lone surrogate (``"\\ud800"``, from bytes
decoded with ``errors="surrogateescape"``) cannot be written and used to surface as an
untyped ``UnicodeEncodeError`` from deep inside the SDK.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from harness import UnencodableText, UsageError, arun, run
from harness.loop import Model
from harness.models import (
    AnthropicModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
    ScriptedModel,
    fake_anthropic_client,
    fake_async_openai_client,
    fake_openai_client,
    reply,
)

LONE = "\ud800"

ADAPTERS: dict[str, Callable[[Model], Any]] = {
    "chat": lambda served: OpenAIChatModel(fake_openai_client(served), "gpt-test"),
    "chat stream": lambda served: OpenAIChatModel(
        fake_openai_client(served), "gpt-test", stream=True
    ),
    "responses": lambda served: OpenAIResponsesModel(fake_openai_client(served), "gpt-test"),
    "anthropic": lambda served: AnthropicModel(fake_anthropic_client(served), "claude-test"),
    "anthropic stream": lambda served: AnthropicModel(
        fake_anthropic_client(served), "claude-test", stream=True
    ),
}


# where the text is in each format's body: (a bad prompt, a bad system prompt)
WHERE = {
    "chat": ("messages[1].content", "messages[0].content"),
    "responses": ("input[1].content", "input[0].content"),
    "anthropic": ("messages[0].content", "system"),
}


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
@pytest.mark.parametrize("bad", ["prompt", "system"])
def test_a_lone_surrogate_is_a_typed_usage_error_naming_the_field(adapter: str, bad: str) -> None:
    served = ScriptedModel([reply("never sent")])
    prompt = f"hi {LONE} there" if bad == "prompt" else "hi"
    system = f"be {LONE} brief" if bad == "system" else "be brief"
    with pytest.raises(UnencodableText) as info:
        run(ADAPTERS[adapter](served), prompt, system=system)
    error = info.value
    where = WHERE[adapter.removesuffix(" stream")][bad == "system"]
    assert isinstance(error, UsageError)
    assert error.where == where and where in str(error)
    assert "'\\ud800'" in str(error) and "errors='replace'" in str(error)
    assert served.requests == []  # nothing reached the provider
    assert error.messages is not None and len(error.messages) >= 1  # the history survives


def test_the_async_client_says_the_same() -> None:
    served = ScriptedModel([reply("never sent")])
    model = OpenAIChatModel(fake_async_openai_client(served), "gpt-test")
    with pytest.raises(UnencodableText, match=r"messages\[0\]\.content"):
        asyncio.run(arun(model, f"hi {LONE}"))


def test_valid_text_outside_the_basic_plane_is_sent_unchanged() -> None:
    served = ScriptedModel([reply("ok")])
    result = run(ADAPTERS["chat"](served), "emoji \U0001f600 and \u00e9")
    assert result.output == "ok"
    assert served.requests[0].messages[0].content == "emoji \U0001f600 and \u00e9"
