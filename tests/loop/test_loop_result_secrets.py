"""Presets and known secrets stay out of *successful* results too.

docs/context-injection.md promises that presets are kept out of every model-visible
message. A raising tool's message was scrubbed (``Tool.error_result``,
``completion.fail``); a tool that returned the value in a successful result sent it
to the model (and so to the provider) verbatim. The rule of errors
(``harness._secrets.hidden_values``: preset values of 4 characters or more, and every
registered secret) now applies to every result's content; the Python value stays as
it is. Plain call-context values are configuration a tool may echo on purpose; a
``Secret`` one is hidden.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from loop_helpers import drive

from harness import (
    CallContext,
    ScriptedModel,
    Secret,
    Tool,
    ToolResult,
    call,
    one_shot,
    reply,
)
from harness._secrets import forget_secrets, known_secrets, register_secret
from harness.loop import RunResult
from harness.tools import Completion

DRIVERS = ["sync", "async"]
LONG_KEY = "sk-preset-result-0a1b2c3d"
SHORT_KEY = "k-77x"  # too short to register as a secret, long enough to hide here
TOKEN = "ctx-token-result-9e8d"


@dataclasses.dataclass
class Connection:
    host: str
    api_key: str


class Client:
    """Not serialisable by pydantic: its public attributes go to the model."""

    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self.region = "eu"


def _model_visible(result: RunResult) -> list[str]:
    texts = [m.content for m in result.messages if isinstance(m.content, str)]
    return texts + [c.content or "" for c in result.trace.completions]


@pytest.mark.filterwarnings("ignore::harness.ShortSecretWarning")
@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("key", [LONG_KEY, SHORT_KEY], ids=["registered", "short"])
def test_a_preset_returned_in_a_successful_result_is_hidden(driver: str, key: str) -> None:
    def connect(host: str, api_key: str) -> Connection:
        """Connect to a host."""
        return Connection(host=host, api_key=api_key)

    def client(api_key: str) -> Client:
        """A client object."""
        return Client(api_key)

    def echo(api_key: str) -> ToolResult:
        """A result the tool wrote itself."""
        return ToolResult(content=f"using {api_key}", value=api_key)

    tools = [Tool.from_function(f, presets={"api_key": key}) for f in (connect, client, echo)]
    model = ScriptedModel(
        [call("connect", host="db.invalid"), call("client"), call("echo"), reply("ok")]
    )
    result = drive(driver, model, "go", tools=tools)
    connected, made, echoed = result.trace.calls
    assert connected.content == '{"host":"db.invalid","api_key":"[hidden]"}'
    assert made.content == '{"api_key":"[hidden]","region":"eu"}'
    assert echoed.content == "using [hidden]" and not echoed.is_error
    assert connected.value == Connection(host="db.invalid", api_key=key)  # the object is kept
    for text in _model_visible(result):
        assert key not in text, text


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_preset_of_a_wrapped_tool_is_hidden_too(driver: str) -> None:
    def fetch(api_key: str) -> str:
        """Fetch with a key."""
        return f"fetched with {api_key}"

    tool = one_shot(Tool.from_function(fetch, presets={"api_key": LONG_KEY}))
    result = drive(driver, ScriptedModel([call("fetch"), reply("ok")]), "go", tools=[tool])
    assert result.trace.calls[0].content == "fetched with [hidden]"


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_secret_call_context_value_is_hidden_a_plain_one_is_shown(driver: str) -> None:
    def whoami(ctx: CallContext) -> dict[str, Any]:
        """Who is calling."""
        return {"token": ctx["token"], "user": ctx["user"]}

    model = ScriptedModel([call("whoami"), reply("ok")])
    context = {"token": Secret(TOKEN), "user": "alice-example"}
    result = drive(driver, model, "go", tools=[whoami], context=context)
    assert result.trace.calls[0].content == '{"token":"[hidden]","user":"alice-example"}'
    assert all(TOKEN not in text for text in _model_visible(result))


@pytest.mark.parametrize("driver", DRIVERS)
def test_an_async_tools_completion_hides_known_secrets(driver: str) -> None:
    started: list[Completion] = []

    def export(ctx: CallContext) -> ToolResult:
        """Export in the background."""
        started.append(ctx.completion)
        return ToolResult.started("Export started.")

    def deliver(event: Any) -> None:
        if event.kind == "ToolCalled" and started:
            started.pop()(f"exported with {TOKEN}")

    model = ScriptedModel([call("export"), reply("ok")])
    context = {"token": Secret(TOKEN)}
    result = drive(driver, model, "go", tools=[export], observers=[deliver], context=context)
    (completion,) = result.trace.completions
    assert completion.content == "exported with [hidden]"
    assert all(TOKEN not in text for text in _model_visible(result))


@pytest.fixture
def no_registered_secret() -> Iterator[None]:
    """No secret registered while the test runs (the registry is restored after)."""
    saved = known_secrets()
    forget_secrets(saved)
    yield
    for value in saved:
        register_secret(value, warn=False)


@pytest.mark.filterwarnings("ignore::harness.ShortSecretWarning")
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_short_preset_is_hidden_when_no_secret_is_registered(
    driver: str, no_registered_secret: None
) -> None:
    # results skip the scan when nothing can be hidden: a short preset (never registered)
    # must still count as something to hide
    def echo(api_key: str) -> str:
        """Echo the key."""
        return f"using {api_key}"

    tool = Tool.from_function(echo, presets={"api_key": SHORT_KEY})
    result = drive(driver, ScriptedModel([call("echo"), reply("ok")]), "go", tools=[tool])
    (echoed,) = result.trace.calls
    assert echoed.value == f"using {SHORT_KEY}"
    assert not any(SHORT_KEY in text for text in _model_visible(result))
