"""The SDK adapters hide a client's credentials by the one rule of ``harness._secrets``.

``hidden_values`` (values of ``MIN_VALUE_LENGTH`` characters or more) decides what an
OpenAI or Anthropic client's key, organization, project or auth token hides in error
messages, as it does for tool presets and call-context values.
"""

from __future__ import annotations

from collections.abc import Callable

import anthropic
import httpx2
import openai
import pytest
from wire_helpers import model_request

from harness import ProviderError
from harness._secrets import MIN_VALUE_LENGTH
from harness.loop import Model
from harness.models import AnthropicModel, OpenAIChatModel


def _echo_401(request: httpx2.Request) -> httpx2.Response:
    """A 401 whose message repeats every header value it was sent (a careless proxy)."""
    seen = " ".join(f"{k}={v}" for k, v in request.headers.items())
    error = {"message": f"denied: {seen}", "type": "authentication_error"}
    return httpx2.Response(401, json={"type": "error", "error": error})


def _openai(key: str, organization: str) -> Model:
    client = openai.OpenAI(
        base_url="http://llm.test/v1",
        api_key=key,
        organization=organization,
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(_echo_401)),
    )
    return OpenAIChatModel(client, "gpt-test")


def _anthropic(token: str, header: str) -> Model:
    client = anthropic.Anthropic(
        base_url="http://claude.test",
        auth_token=token,
        default_headers={"x-proxy-api-key": header},
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(_echo_401)),
    )
    return AnthropicModel(client, "claude-test")


ADAPTERS: dict[str, Callable[[str, str], Model]] = {"openai": _openai, "anthropic": _anthropic}


def _message(adapter: str, long: str, short: str) -> str:
    with pytest.raises(ProviderError) as info:
        ADAPTERS[adapter](long, short).request(model_request())
    return str(info.value)


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_credentials_of_the_minimum_length_are_hidden_shorter_ones_are_not(adapter: str) -> None:
    assert MIN_VALUE_LENGTH == 4
    shown = _message(adapter, "Zq7!", "Zq8")
    assert "Zq7!" not in shown and "[hidden]" in shown
    assert "Zq8" in shown  # too short to hide without mangling other text


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_the_adapters_follow_the_shared_rule(adapter: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness._secrets.MIN_VALUE_LENGTH", 6)
    shown = _message(adapter, "Zq7!x", "Zq8!yz")
    assert "Zq7!x" in shown  # five characters: below the rule's minimum now
    assert "Zq8!yz" not in shown
