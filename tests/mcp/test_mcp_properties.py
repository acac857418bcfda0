"""Property: whatever list changes a server makes, the offered MCP tools follow its list."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from harness import ScriptedModel, call, reply, run
from harness.mcp import FakeMcpServer, McpServer, McpTools

NAMES = [f"t{i}" for i in range(5)]

changes = st.lists(
    st.tuples(st.sets(st.sampled_from(NAMES)), st.sets(st.sampled_from(NAMES))),
    min_size=1,
    max_size=4,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes)
def test_offered_mcp_tools_always_equal_the_servers_list(
    steps: list[tuple[set[str], set[str]]],
) -> None:
    fake = FakeMcpServer(
        "s",
        [{"name": "step", "result": "ok"}],
        changes=[
            {
                "after_calls": number,
                "add": [{"name": n} for n in sorted(add)],
                "remove": sorted(remove - add),
            }
            for number, (add, remove) in enumerate(steps, start=1)
        ],
    )
    listed = ["step"]
    expected = [tuple(listed)]
    for add, remove in steps:
        listed = [n for n in listed if n not in (remove - add)]
        listed += [n for n in sorted(add) if n not in listed]
        expected.append(tuple(listed))
    model = ScriptedModel([*(call("step") for _ in steps), reply("x")])
    with McpServer("s", fake) as server:
        result = run(model, "go", strategies=[McpTools(server)])
    offered = [tuple(sorted(it.offered)) for it in result.trace.iterations]
    assert offered == [tuple(sorted(e)) for e in expected]
    for iteration in result.trace.iterations:
        for change in iteration.changes:
            assert change.strategy == "mcp:s"
