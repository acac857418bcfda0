"""Names derived from hidden values (issue 34 section 1): an entity whose id carries a
secret is named ``hidden_<n>``, and no surface that shows tool names (requests,
timelines, snapshots, reports, cassettes) shows the secret in any form."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from harness import (
    EntityDiscovery,
    ProviderDiscovered,
    Secret,
    as_tool,
    llm_tool,
    run,
    tool_provider,
)
from harness._secrets import carries_secret, forget_secrets, known_secrets, secret_forms
from harness.loop import RunResult
from harness.models import OpenAIChatModel, ScriptedModel, WireServer, call, reply
from harness.scenarios import format_timeline, timeline_rows
from harness.testing import open_cassette
from harness.testing._report import junit_properties, report_text
from harness.testing._snapshot import snapshot_text
from harness.tools import readable_part

KEY = "sk-live-Acct-Key-0123456789"


@pytest.fixture(autouse=True)
def _clean_registry() -> Iterator[None]:
    before = known_secrets()
    yield
    forget_secrets(known_secrets() - before)


@tool_provider(prefix="acct")
class Account:
    def __init__(self, id: str) -> None:
        self.id = id

    @llm_tool
    def balance(self) -> int:
        """The balance."""
        return 5


def finder(*ids: str, presets: dict[str, Any] | None = None) -> Any:
    """A tool returning accounts: ``ids`` (``"{key}"`` stands for its ``api_key``)."""

    def accounts(api_key: str = "") -> list[Account]:
        """The accounts."""
        return [Account(i.format(key=api_key)) for i in ids]

    return as_tool(accounts, presets=presets)


def discover(tool: Any, *then: Any, **options: Any) -> RunResult:
    model = ScriptedModel([call("accounts", {}), *then, reply("done")])
    return run(model, "go", tools=[tool], strategies=[EntityDiscovery()], **options)


def name_forms(secret: str) -> set[str]:
    """What a leak looks like: the text forms, and the forms a name part keeps."""
    forms = {f for f in secret_forms(secret) if len(f) >= 8}
    return forms | {readable_part(secret), readable_part(secret).lower()}


def assert_hidden(secret: str, *texts: str) -> None:
    for text in texts:
        found = [f for f in name_forms(secret) if f in text or f in text.lower()]
        assert not found, f"{found[0]!r} leaked into {text[:300]!r}"


def test_an_id_that_is_a_preset_key_names_the_tools_by_an_index() -> None:
    result = discover(finder("{key}", presets={"api_key": KEY}), call("acct_*_balance", {}))
    assert result.trace.iterations[0].injected == ("acct_hidden_1_balance",)
    assert result.trace.calls[1].value == 5  # the tool is bound to the instance all the same
    (event,) = [e for e in result.trace.events if isinstance(e, ProviderDiscovered)]
    assert event.instance_id == "hidden_1" and event.tool_names == ("acct_hidden_1_balance",)
    assert_hidden(KEY, repr(result.trace.events), json.dumps(result.trace.to_dict()))


def test_an_id_holding_a_key_a_short_preset_or_a_secret_context_value_is_hidden() -> None:
    pin = "4242x"  # 5 characters: hidden from results (and names), too short to register
    with pytest.warns(Warning, match="characters long"):
        tool = finder("user-{key}-main", f"Acct{pin.upper()}", presets={"api_key": pin})
    result = discover(tool)
    assert result.trace.iterations[0].injected == ("acct_hidden_1_balance", "acct_hidden_2_balance")
    token = Secret("tok-context-ABCDEFGH")
    assert carries_secret(f"a.{token.lower()}.b")  # a registered secret, in any case
    assert carries_secret("tok_context_abcdefgh_9")  # as a name part keeps it


def test_plain_ids_keep_their_readable_names_and_indices_are_per_run() -> None:
    plain = discover(finder("c-123", "{key}", presets={"api_key": KEY}))
    assert plain.trace.iterations[0].injected == ("acct_c123_balance", "acct_hidden_1_balance")
    again = discover(finder("c-123", "{key}", presets={"api_key": KEY}))
    assert again.trace.iterations[0].injected == plain.trace.iterations[0].injected
    assert not carries_secret("c-123") and not carries_secret("")


def test_every_surface_that_shows_names_shows_the_index() -> None:
    result = discover(finder("{key}", presets={"api_key": KEY}), call("acct_*_balance", {}))
    model_requests = result.trace.iterations
    assert "acct_hidden_1_balance" in model_requests[1].offered
    rows = timeline_rows(result.trace)
    texts = [
        format_timeline(rows),
        snapshot_text(result),
        report_text([result.trace], []),
        str(junit_properties([result.trace])),
        repr(result.messages),
    ]
    assert all("acct_hidden_1_balance" in text for text in texts[:4])
    assert_hidden(KEY, *texts)


def test_the_requests_sent_and_the_cassette_recorded_carry_no_key(tmp_path: Path) -> None:
    script = ScriptedModel([call("accounts", {}), call("acct_*_balance", {}), reply("5")])
    path = tmp_path / "accounts.yaml"
    with (
        WireServer(script) as server,
        open_cassette(path, record_mode="once"),
        openai.OpenAI(base_url=server.url, api_key="sk-test", max_retries=0) as client,
    ):
        result = run(
            OpenAIChatModel(client, "gpt-4o-mini"),
            "go",
            tools=[finder("{key}", presets={"api_key": KEY})],
            strategies=[EntityDiscovery()],
        )
    assert result.output == "5"
    sent = [json.dumps([d.name for d in r.tools]) for r in script.requests]
    assert "acct_hidden_1_balance" in sent[1]
    assert_hidden(KEY, *sent, path.read_text(encoding="utf-8"))
