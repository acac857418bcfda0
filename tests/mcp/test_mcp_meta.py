"""Call context -> _meta: what crosses the MCP boundary, checked by an echo server."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, strategies as st

from harness import ScriptedModel, call, reply, run
from harness._credentials import is_credential_name
from harness._errors import UsageError
from harness.mcp import (
    FakeMcpServer,
    McpServer,
    McpTools,
    MetaConverter,
    allow_keys,
    deny_keys,
    no_meta,
    pass_through,
)
from harness.mcp._meta import meta_for
from harness.tools import CallContext

SECRET = "sk-live-never-leaves"
CONTEXT = {"user_id": "u-17", "tenant": "acme", "api_key": SECRET}


def _received(meta: MetaConverter | None, mode: str = "auto") -> tuple[dict[str, Any], str]:
    """What an in-memory echo server received as _meta, and the tool message the model read."""
    fake = FakeMcpServer("echo", [{"name": "echo", "echo": True}])
    with McpServer("echo", fake, meta=meta, mode=mode) as server:
        result = run(
            ScriptedModel([call("echo", {"x": 1}), reply("done")]),
            "go",
            strategies=[McpTools(server)],
            context=CONTEXT,
        )
    content = result.trace.iterations[0].calls[0].content
    assert json.loads(content)["meta"] == dict(fake.calls[0].meta)
    return dict(fake.calls[0].meta), content


def test_pass_through_is_the_default_and_keeps_credentials_home(mode: str) -> None:
    got, content = _received(None, mode)
    assert got == {"user_id": "u-17", "tenant": "acme"}  # api_key: a credential name
    assert SECRET not in content


def test_no_meta_sends_nothing() -> None:
    got, _ = _received(no_meta())
    assert got == {}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_allow_list_keeps_the_secret_home(mode: str) -> None:
    got, content = _received(allow_keys("user_id", "tenant"), mode)
    assert got == {"user_id": "u-17", "tenant": "acme"}
    assert SECRET not in content


def test_deny_list_keeps_the_secret_home() -> None:
    got, content = _received(deny_keys("api_key"))
    assert got == {"user_id": "u-17", "tenant": "acme"}
    assert SECRET not in content


def test_a_function_converter_decides() -> None:
    got, _ = _received(lambda ctx: {"who": ctx["user_id"], "tool": ctx.tool_name})
    assert got == {"who": "u-17", "tool": "echo"}


def test_non_json_values_and_reserved_keys_never_cross() -> None:
    context = CallContext({"ok": [1, {"a": None}], "obj": object(), "t": (1, 2)})
    assert meta_for(pass_through(), context) == {"ok": [1, {"a": None}], "t": (1, 2)}
    assert meta_for(lambda c: {"io.modelcontextprotocol/x": 1, "k": {1: 2}}, context) is None


def test_a_converter_returning_junk_is_a_usage_error() -> None:
    def bad(context: CallContext) -> Any:
        return ["user_id"]

    with pytest.raises(UsageError, match="returned list; return a mapping of JSON values"):
        meta_for(bad, CallContext({}))


def test_allow_and_deny_need_keys() -> None:
    with pytest.raises(UsageError, match="allow_keys"):
        allow_keys()
    with pytest.raises(UsageError, match="deny_keys"):
        deny_keys("")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=5,
)
contexts = st.dictionaries(st.text(min_size=1, max_size=6), json_values, max_size=6)


@given(contexts, st.sets(st.text(min_size=1, max_size=6), min_size=1, max_size=4))
def test_allow_list_output_is_within_the_allowed_keys(
    values: Mapping[str, Any], allowed: set[str]
) -> None:
    got = meta_for(allow_keys(*allowed), CallContext(values)) or {}
    assert set(got) <= allowed
    assert all(got[k] == values[k] for k in got)


@given(contexts, st.sets(st.text(min_size=1, max_size=6), min_size=1, max_size=4))
def test_deny_list_output_never_holds_a_denied_key(
    values: Mapping[str, Any], denied: set[str]
) -> None:
    got = meta_for(deny_keys(*denied), CallContext(values)) or {}
    lowered = {k.lower() for k in denied}
    assert not {k.lower() for k in got} & lowered
    kept = {
        k
        for k in values
        if k.lower() not in lowered
        and not is_credential_name(k)
        and not k.startswith("io.modelcontextprotocol/")
    }
    assert set(got) == kept
