"""The one client check of the SDK adapters (``harness.models._clients``)."""

from __future__ import annotations

import anthropic
import openai
import pytest

from harness import UsageError
from harness.models import AnthropicModel, OpenAIChatModel, OpenAIResponsesModel
from harness.models._clients import client_kind

KEY = "test-key-not-a-secret"


@pytest.mark.parametrize(
    ("client", "sdk", "kind"),
    [
        (openai.OpenAI(api_key=KEY, base_url="http://127.0.0.1:9/v1"), "openai", "sync"),
        (openai.AsyncOpenAI(api_key=KEY, base_url="http://127.0.0.1:9/v1"), "openai", "async"),
        (anthropic.Anthropic(api_key=KEY, base_url="http://127.0.0.1:9"), "anthropic", "sync"),
        (
            anthropic.AsyncAnthropic(api_key=KEY, base_url="http://127.0.0.1:9"),
            "anthropic",
            "async",
        ),
    ],
)
def test_a_client_of_the_sdk_gives_its_kind(client: object, sdk: str, kind: str) -> None:
    assert client_kind(client, sdk=sdk, adapter="X") == kind  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("adapter", "wrong", "says"),
    [
        (OpenAIChatModel, anthropic.Anthropic(api_key=KEY), r"openai\.OpenAI or openai\.Async"),
        (OpenAIResponsesModel, object(), r"OpenAIResponsesModel\(openai\.OpenAI\(base_url="),
        (
            AnthropicModel,
            openai.OpenAI(api_key=KEY, base_url="http://127.0.0.1:9/v1"),
            r"AnthropicModel needs an anthropic\.Anthropic or anthropic\.AsyncAnthropic client, "
            r"got OpenAI; e\.g\. AnthropicModel\(anthropic\.Anthropic\(api_key=\.\.\.\)\)",
        ),
    ],
)
def test_another_client_is_refused_naming_the_classes_it_takes(
    adapter: type, wrong: object, says: str
) -> None:
    with pytest.raises(UsageError, match=says):
        adapter(wrong, model="m")
