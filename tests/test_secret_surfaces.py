"""Secrets at the edges (issue 27 section 2): MCP ``_meta``, MCP error text, the blackboard,
``harness cassette check`` and the recording scrubber share one credential rule, and no
secret leaves through any of them, however deep it is nested or however its name is spelt.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from harness import (
    EntityDiscovery,
    ScriptedModel,
    Secret,
    as_tool,
    call,
    llm_tool,
    reply,
    run,
    tool_provider,
)
from harness._credentials import credential_words
from harness._secrets import forget_secrets, known_secrets, secret_forms
from harness.cassettes import load_cassette
from harness.cassettes._leaks import credential_leaks
from harness.cli._app import app
from harness.fuzz.agent._counterexample import agent_counterexample_data
from harness.fuzz.agent._report import AgentFuzzReport
from harness.injection import blackboard_tools
from harness.injection._agentic import DEPTH_KEY
from harness.mcp import FakeMcpServer, McpServer, McpTools, allow_keys, deny_keys, pass_through
from harness.mcp._convert import to_result
from harness.mcp._meta import meta_for
from harness.scenarios import AgentRun, check_properties, format_timeline, timeline_rows
from harness.testing._report import report_text
from harness.testing._scrub import CassetteScrubber
from harness.testing._snapshot import snapshot_text
from harness.tools import CallContext, ToolResult, readable_part

ISSUE_NAMES = (
    "aws_secret_access_key",
    "secret_key",
    "secretKey",
    "auth",
    "passphrase",
    "database_url",
    "ssh_key",
    "signing_key",
    "session_id",
    "api_key",
    "API_KEY",
)
secrets_st = st.text("abcdefghijkmnpqrstuvwxyz0123456789", min_size=8, max_size=20).map(
    lambda tail: f"Zq9-{tail}"  # never a piece of what the harness shows anyway
)


@pytest.fixture(autouse=True)
def _clean_registry() -> Iterator[None]:
    before = known_secrets()
    yield
    forget_secrets(known_secrets() - before)


def assert_hidden(secret: str, *texts: str) -> None:
    forms = [f for f in secret_forms(secret) if len(f) >= 8]
    for text in texts:
        found = [f for f in forms if f in text]
        assert not found, f"{found[0]!r} leaked into {text[:300]!r}"


def styled(name: str, style: str) -> str:
    words = credential_words(name)
    camel = words[0] + "".join(w.capitalize() for w in words[1:])
    return {
        "snake": "_".join(words),
        "upper": "_".join(words).upper(),
        "kebab": "-".join(words),
        "camel": camel,
    }[style]


def nested(depth: int, key: str, value: Any) -> dict[str, Any]:
    inner: dict[str, Any] = {key: value}
    for level in range(depth):
        inner = {f"level{level}": inner}
    return inner


# -- MCP _meta --------------------------------------------------------------------------


def _sent(context: dict[str, Any], meta: Any = None) -> dict[str, Any]:
    """What an in-memory echo server received as ``_meta``."""
    fake = FakeMcpServer("echo", [{"name": "echo", "echo": True}])
    with McpServer("echo", fake, meta=meta) as server:
        run(
            ScriptedModel([call("echo", {}), reply("done")]),
            "go",
            strategies=[McpTools(server)],
            context=context,
        )
    return dict(fake.calls[0].meta)


@pytest.mark.filterwarnings("ignore::harness.ShortSecretWarning")  # Secret("4711") warns
def test_the_default_meta_sends_no_secret_no_credential_and_no_internal_value() -> None:
    token = Secret("sk-secret-token-0123456789")
    context = {
        "user_id": "u-17",
        "note": token,  # a Secret under an innocent name
        "API_KEY": "plain-credential-123",
        "profile": {"name": "Ann", "auth": {"api_key": "nested-cred-123"}, "pin": Secret("4711")},
        "tags": ["a", Secret("sk-in-a-list-0123456")],
        DEPTH_KEY: 2,
    }
    assert _sent(context) == {"user_id": "u-17", "profile": {"name": "Ann"}, "tags": ["a"]}


def test_deny_keys_matches_any_case_at_any_depth() -> None:
    context = CallContext({"Tenant": "acme", "x": {"TENANT": "acme", "y": 1}, "z": 2})
    assert meta_for(deny_keys("tenant"), context) == {"x": {"y": 1}, "z": 2}


def test_allow_keys_sends_a_named_plain_credential_but_never_a_secret() -> None:
    context = CallContext({"token": "plain-token-123", "other": Secret("sk-never-0123456789")})
    assert meta_for(allow_keys("token", "other"), context) == {"token": "plain-token-123"}


def test_a_nested_agent_does_not_send_its_depth_to_mcp_servers() -> None:
    from harness.injection import agent_tool

    fake = FakeMcpServer("echo", [{"name": "echo", "echo": True}])
    with McpServer("echo", fake) as server:
        worker = ScriptedModel([call("echo", {}), reply("worked")])
        helper = agent_tool("helper", "Delegate.", model=worker, strategies=[McpTools(server)])
        run(ScriptedModel([call("helper", {"task": "go"}), reply("done")]), "go", tools=[helper])
    assert DEPTH_KEY not in fake.calls[0].meta


# -- MCP error text ---------------------------------------------------------------------


def test_an_mcp_error_quoting_a_secret_reaches_the_model_scrubbed() -> None:
    key = Secret("sk-mcp-error-0123456789")
    quoted = urllib.parse.quote(key)
    fake = FakeMcpServer(
        "s",
        [
            {
                "name": "fail",
                "error": True,
                "result": f"denied {key} / {key.upper()} / ?key={quoted} for tenant-secret-42",
            }
        ],
    )
    with McpServer("s", fake) as server:
        result = run(
            ScriptedModel([call("fail", {}), reply("done")]),
            "go",
            strategies=[McpTools(server)],
            context={"token": key, "tenant": "tenant-secret-42"},
        )
    (record,) = result.trace.calls
    assert record.error_kind == "mcp_error" and "[hidden]" in record.content
    assert_hidden(key, record.content, *(str(m) for m in result.messages))
    assert "tenant-secret-42" not in record.content  # a context value, by its text


# -- the blackboard -----------------------------------------------------------------------


def _shown(state: dict[str, Any]) -> list[str]:
    tools = {t.name: t for t in blackboard_tools()}
    context = CallContext(state=state)
    texts = []
    for name, arguments in [("blackboard_list", {})] + [
        ("blackboard_read", {"key": key}) for key in state
    ]:
        prepared = tools[name].prepare(json.dumps(arguments), context)
        assert not isinstance(prepared, ToolResult)
        texts.append(tools[name].to_result(prepared.run_sync()).content)
    return texts


@pytest.mark.parametrize("name", ISSUE_NAMES)
def test_the_blackboard_hides_credential_names_top_level_and_nested(name: str) -> None:
    value = "cred-value-0123456789"
    texts = _shown({name: value, "config": {"db": {name: value}, "keep": "visible"}})
    assert_hidden(value, *texts)
    assert any("visible" in text for text in texts)


@pytest.mark.filterwarnings("ignore::harness.ShortSecretWarning")  # Secret("4711") warns
def test_a_short_secret_61_levels_down_is_not_shown() -> None:
    texts = _shown({"deep": nested(61, "v", Secret("4711")), "shallow": {"v": Secret("4711")}})
    assert not any("4711" in text for text in texts)
    assert any("[hidden]" in text for text in texts)


# -- cassette check and the recording scrubber ----------------------------------------------


def _cassette(
    *, headers: dict[str, str] | None = None, uri: str = "https://api.test/v1/x", body: Any = None
) -> dict[str, Any]:
    return {
        "version": 1,
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": uri,
                    "body": json.dumps(body if body is not None else {"q": 1}),
                    "headers": {k: [v] for k, v in (headers or {}).items()},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"content-type": ["application/json"]},
                    "body": {"string": '{"ok": true}'},
                },
            }
        ],
    }


AWS_ID, AWS_SECRET = "AKIAQWERTYUIOPASDFGH", "qwertyuiopasdfghjklzxcvbnm0123456789ABCD"
LEAKS = {
    "proxy-authorization": _cassette(headers={"Proxy-Authorization": "Basic dXNlcjpwYXNz"}),
    "x-auth-token": _cassette(headers={"X-Auth-Token": "tok-0123456789abcdef"}),
    "x-custom-key": _cassette(headers={"X-Custom-Key": "custom-0123456789"}),
    "userinfo": _cassette(uri="https://bob:hunter2-pass@api.test/v1/x"),
    "apikey": _cassette(uri="https://api.test/v1/x?apikey=k-0123456789&page=2"),
    "client_secret": _cassette(uri="https://api.test/v1/x?client_secret=cs-0123456789"),
    "github": _cassette(body={"note": "ghp_" + "A1b2C3d4" * 5}),
    "aws": _cassette(
        body={"env": f"AWS_ACCESS_KEY_ID={AWS_ID} AWS_SECRET_ACCESS_KEY={AWS_SECRET}"}
    ),
    "secret_key field": _cassette(body={"settings": {"secret_key": "sk-field-0123456789"}}),
}


@pytest.mark.parametrize("leak", list(LEAKS))
def test_cassette_check_finds_what_the_scrubber_treats_as_credentials(
    leak: str, tmp_path: Path
) -> None:
    path = tmp_path / "leaky.yaml"
    path.write_text(yaml.safe_dump(LEAKS[leak]))
    result = CliRunner().invoke(app, ["cassette", "check", str(path)])
    assert result.exit_code == 2, result.output
    assert f"{path}: interaction 1:" in result.output and "scrub it" in result.output
    scrubbed = tmp_path / "scrubbed.yaml"
    scrubbed.write_text(yaml.safe_dump(_scrubbed(LEAKS[leak])))
    clean = CliRunner().invoke(app, ["cassette", "check", str(scrubbed)])
    assert clean.exit_code == 0, clean.output


def _scrubbed(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as the recording scrubber would have written it."""
    from vcr.request import Request  # type: ignore[import-untyped]

    engine = CassetteScrubber.build(secrets=[], environ={})
    out: dict[str, Any] = json.loads(json.dumps(data))
    for item in out["interactions"]:
        raw = item["request"]
        headers = {k: v[0] for k, v in raw["headers"].items()}
        request = engine.request(Request(raw["method"], raw["uri"], raw["body"].encode(), headers))
        item["request"] = {
            "method": request.method,
            "uri": request.uri,
            "body": request.body.decode(),
            "headers": {k: [v] for k, v in request.headers.items()},
        }
        item["response"] = engine.response(item["response"])
    return out


def test_the_scrubber_removes_the_fields_a_plugin_recording_kept() -> None:
    body = {"secret_key": "sk-f1-0123456789", "aws_secret_access_key": AWS_SECRET, "q": 1}
    scrubbed = _scrubbed(_cassette(body=body))
    assert json.loads(scrubbed["interactions"][0]["request"]["body"]) == {"q": 1}


# -- the property over every new surface ----------------------------------------------------

SURFACES = [
    "meta",
    "meta_deny",
    "mcp_error",
    "blackboard",
    "cassette",
    "derived_name",
    "fuzz_message",
]


@tool_provider(prefix="acct")
class _Account:
    def __init__(self, id: str) -> None:
        self.id = id

    @llm_tool
    def close(self) -> str:
        """Close it."""
        return "closed"


def _shown_forms(secret: str, form: str) -> str:
    return {
        "plain": secret,
        "upper": secret.upper(),
        "quoted": urllib.parse.quote(secret),
        "json": json.dumps(secret),
    }[form]


def _derived_name_surfaces(secret: str, shown: str, via: str) -> list[str]:
    """Every surface that shows tool names, for entities whose ids carry ``secret``."""

    def accounts(api_key: str = "") -> list[_Account]:
        """Accounts keyed by the key."""
        return [_Account(f"id.{shown}"), _Account(f"{readable_part(secret)}_x")]

    presets = {"api_key": secret} if via == "preset" else None
    if via == "secret":
        Secret(secret)
    model = ScriptedModel([call("accounts", {}), call("acct_hidden_2_close", {}), reply("done")])
    result = run(
        model, "go", tools=[as_tool(accounts, presets=presets)], strategies=[EntityDiscovery()]
    )
    names = result.trace.iterations[0].injected
    assert names == ("acct_hidden_1_close", "acct_hidden_2_close")
    return [
        json.dumps([list(r.tool_names) for r in model.requests]),
        format_timeline(timeline_rows(result.trace)),
        snapshot_text(result),
        report_text([result.trace], []),
        repr(result.trace.events),
        repr([c.name for c in result.trace.calls]),  # the names in the history
    ]


def _fuzz_message_surfaces(secret: str, shown: str, via: str) -> list[str]:
    """Every report of a property whose message quotes ``secret``."""

    def prop(run_view: Any) -> None:
        raise AssertionError(f"refused {shown} / {secret}")

    if via == "secret":
        Secret(secret)
    hidden = [secret] if via == "preset" else []
    finding = check_properties(
        AgentRun.from_result(run(ScriptedModel([reply("x")]), "go")), [prop], hidden=hidden
    )
    assert finding is not None and "[hidden]" in finding.message
    report = AgentFuzzReport(agent="m:f", finding=finding, counterexample_text="")
    data = agent_counterexample_data([{"reply": "x"}], finding, agent="m:f")
    return [json.dumps(report.to_json()), report.explain(), json.dumps(data), str(finding)]


def assert_name_hidden(secret: str, *texts: str) -> None:
    """``assert_hidden``, plus the forms a name part keeps of ``secret``."""
    assert_hidden(secret, *texts)
    part = readable_part(secret)
    for text in texts:
        assert part not in text and part.lower() not in text.lower(), text[:300]


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    secret=secrets_st,
    name=st.sampled_from(ISSUE_NAMES),
    style=st.sampled_from(["snake", "upper", "kebab", "camel"]),
    depth=st.sampled_from([0, 1, 3, 61, 70]),
    surface=st.sampled_from(SURFACES),
    form=st.sampled_from(["plain", "upper", "quoted", "json"]),
)
def test_property_no_secret_leaves_through_a_new_surface(
    secret: str, name: str, style: str, depth: int, surface: str, form: str
) -> None:
    """A secret under a credential name (any spelling) or as a ``Secret`` (any name),
    nested ``depth`` levels deep, never reaches the other side; nor does a secret an
    entity's id carries reach a tool name, or one a property's message quotes a fuzz
    report (issue 34 section 1)."""
    key = styled(name, style)
    if surface in ("meta", "meta_deny"):
        converter = pass_through() if surface == "meta" else deny_keys("unrelated")
        context = CallContext(
            {"by_name": nested(depth, key, secret), "by_type": nested(depth, "x", Secret(secret))}
        )
        assert_hidden(secret, json.dumps(meta_for(converter, context)))
    elif surface == "mcp_error":
        import mcp_types as types

        shown = {
            "plain": secret,
            "upper": secret.upper(),
            "quoted": urllib.parse.quote(secret),
            "json": json.dumps(secret),
        }[form]
        failed = types.CallToolResult(
            content=[types.TextContent(type="text", text=f"refused {shown} at depth {depth}")],
            is_error=True,
        )
        result = to_result("s", "t", failed, hidden=[secret])
        assert "[hidden]" in result.content
        assert_hidden(secret, result.content)
    elif surface == "blackboard":
        state = {"a": nested(depth, key, secret), "b": nested(depth, "x", Secret(secret))}
        assert_hidden(secret, *_shown(state))
    elif surface in ("derived_name", "fuzz_message"):
        via = "preset" if depth % 2 else "secret"  # a hidden value, or a registered Secret
        made = _derived_name_surfaces if surface == "derived_name" else _fuzz_message_surfaces
        forget_secrets([secret])  # "preset" must not pass by an earlier example's Secret
        assert_name_hidden(secret, *made(secret, _shown_forms(secret, form), via))
    else:
        leaky = _cassette(headers={key: secret}, body=nested(min(depth, 40), key, secret))
        assert len(credential_leaks(load_cassette(leaky))) == 2  # the header and the field
        clean = _scrubbed(leaky)
        assert credential_leaks(load_cassette(clean)) == []
        assert_hidden(secret, json.dumps(clean))
