"""FakeMcpServer: its script is validated, its calls recorded, and it can be reset."""

from __future__ import annotations

import pytest

from harness._errors import UsageError
from harness.mcp import FakeMcpServer, McpServer


def test_changes_need_exactly_one_trigger() -> None:
    with pytest.raises(UsageError, match="exactly one of after_call"):
        FakeMcpServer("s", changes=[{"add": []}])
    with pytest.raises(UsageError, match="exactly one of after_call"):
        FakeMcpServer("s", changes=[{"after_call": "a", "after_calls": 1}])


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(UsageError, match="invalid tools or changes"):
        FakeMcpServer("s", [{"name": "a", "reslt": "typo"}])
    with pytest.raises(UsageError, match=r"needs 'name' and takes \['changes', 'name', 'tools'\]"):
        FakeMcpServer.from_data({"tools": []})


def test_calls_are_recorded_and_reset_restores_the_script() -> None:
    fake = FakeMcpServer.from_data(
        {
            "name": "s",
            "tools": [{"name": "a", "result": "A"}],
            "changes": [{"after_calls": 1, "add": [{"name": "b"}], "remove": ["a"]}],
        }
    )
    assert fake.last_call is None
    with McpServer("s", fake) as server:
        assert server.call("a", {"x": 1}).content == "A"
    assert fake.tool_names == ("b",)
    assert fake.last_call is not None
    assert (fake.last_call.tool, dict(fake.last_call.arguments)) == ("a", {"x": 1})
    fake.reset()
    assert fake.tool_names == ("a",)
    assert fake.calls == []


def test_expect_meta_answers_with_an_error_naming_the_keys() -> None:
    fake = FakeMcpServer("s", [{"name": "a", "expect_meta": {"user": "u"}, "result": "ok"}])
    with McpServer("s", fake, meta=lambda c: {"user": "u", "extra": 1}) as server:
        result = server.call("a", {})
    assert result.is_error
    assert "expected keys ['user'], got keys ['extra', 'user']" in result.content
