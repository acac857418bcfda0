"""Property test: discovery over arbitrarily nested results finds every provider exactly once."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings, strategies as st

from harness.injection import EntityDiscovery, tool_provider
from harness.loop import ProviderDiscovered, StrategyWarning, run
from harness.models import ScriptedModel, call, reply
from harness.tools import Tool, llm_tool

VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@tool_provider(prefix="acct")
class Account:
    def __init__(self, id: str) -> None:
        self.id = id
        self.calls = 0

    @llm_tool
    def balance(self) -> int:
        """The balance."""
        self.calls += 1
        return self.calls

    @llm_tool
    def close_this_account_permanently_and_notify_every_holder(self) -> str:
        """A long method name, to exercise shortening."""
        return "closed"


POOL = [
    Account("a-1"),
    Account("b.2"),
    Account("x" * 40),
    Account("a-1"),  # a different instance with the id of the first
]

leaves = st.one_of(st.sampled_from(POOL), st.integers(), st.text(max_size=3), st.none())
values = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=2), children, max_size=3),
    ),
    max_leaves=8,
)


def _providers_in(value: Any) -> list[Account]:
    if isinstance(value, Account):
        return [value]
    if isinstance(value, dict):
        return [p for v in value.values() for p in _providers_in(v)]
    if isinstance(value, (list, tuple)):
        return [p for v in value for p in _providers_in(v)]
    return []


@settings(max_examples=30, deadline=None)
@given(value=values)
def test_discovery_over_nested_results(value: Any) -> None:
    tool = Tool.from_schema("fetch", "Fetch things.", {"type": "object"}, lambda args: value)
    model = ScriptedModel([call("fetch"), call("fetch"), reply("done")])
    result = run(model, "go", tools=[tool], strategies=[EntityDiscovery()])

    instances = list({id(p): p for p in _providers_in(value)}.values())
    ids = {p.id for p in instances}
    discovered = [e for e in result.trace.events if isinstance(e, ProviderDiscovered)]
    warnings = [e for e in result.trace.events if isinstance(e, StrategyWarning)]
    assert {e.instance_id for e in discovered} == ids
    assert len(discovered) == len(ids)
    assert len(warnings) == len(instances) - len(ids)  # the twin of a-1, when both are present
    injected = result.trace.injected
    assert len(injected) == 2 * len(ids) == len(set(injected))
    assert all(VALID.match(name) for name in injected)
    # the second identical result changes nothing, and the model saw the tools from turn 2 on
    assert result.trace.iterations[1].changes == ()
    assert set(injected) <= set(model.requests[1].tool_names)
    assert not set(injected) & set(model.requests[0].tool_names)
    assert not result.trace.calls[0].is_error
