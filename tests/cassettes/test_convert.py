"""Recorded tools from plain data: the ``ToolDefinition.to_data`` form, read back with
``ToolDefinition.from_data`` (``harness.cassettes._convert``)."""

from __future__ import annotations

from typing import Any

import pytest

from harness import CallContext, ToolDefinition, ToolResult, UsageError
from harness.cassettes import recorded_tools

DEFINITIONS = [
    ToolDefinition(
        name="lookup",
        description="Find a customer.",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
    ),
    ToolDefinition(name="refund", description="Refund.", defer_loading=True, namespace="billing"),
    ToolDefinition(name="find_tools", search="client", description="Search the tools."),
]


def test_stubs_offer_the_recorded_definitions_and_answer_in_order() -> None:
    results: dict[str, list[str | dict[str, Any]]] = {
        "lookup": ["first", "second"],
        "find_tools": [{"content": "x", "reveals": ["refund"]}],
    }
    stubs = {t.name: t for t in recorded_tools([d.to_data() for d in DEFINITIONS], results)}
    assert [stubs[d.name].definition() for d in DEFINITIONS] == DEFINITIONS
    context = CallContext()
    answers = [stubs["lookup"].prepare("{}", context) for _ in range(3)]
    assert [a.content for a in answers if isinstance(a, ToolResult)] == [
        "first",
        "second",
        "(no recorded result left for lookup)",
    ]
    found = stubs["find_tools"].prepare('{"query": "refund"}', context)
    assert isinstance(found, ToolResult) and found.reveals == (DEFINITIONS[1],)


def test_a_key_the_plain_form_does_not_have_is_refused() -> None:
    with pytest.raises(UsageError, match=r"unknown key\(s\) deferred"):
        recorded_tools([{"name": "lookup", "deferred": True}])
