"""Property: whatever ``ToolSearch`` defers and a model's searches reveal, the requests each
adapter builds are accepted by the provider's fake (every request of the run is checked
by the fake's validation, the native-tool rules included), and the trace records each
reveal where it happened."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from harness.injection import ToolSearch
from harness.loop import Model, run
from harness.models import (
    AnthropicModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
    ScriptedModel,
    fake_anthropic_client,
    fake_openai_client,
)
from harness.models._scripted._steps import call, reply, search
from harness.tools import Tool

WORDS = [
    "apple", "bridge", "castle", "dragon", "engine", "forest", "garden", "harbor",
    "island", "jungle", "kettle", "lantern", "meadow", "needle", "orchard", "pepper",
]  # fmt: skip

ADAPTERS = {
    "openai-chat": lambda m: OpenAIChatModel(fake_openai_client(m), "gpt-test"),
    "openai-responses": lambda m: OpenAIResponsesModel(fake_openai_client(m), "gpt-test"),
    "openai-responses-stream": lambda m: OpenAIResponsesModel(
        fake_openai_client(m), "gpt-test", stream=True
    ),
    "anthropic": lambda m: AnthropicModel(fake_anthropic_client(m), "claude-test"),
    "anthropic-stream": lambda m: AnthropicModel(
        fake_anthropic_client(m), "claude-test", stream=True
    ),
}


def _tool(word: str) -> Tool:
    return Tool.from_schema(
        f"get_{word}",
        f"Get the {word}.",
        {"type": "object", "properties": {}},
        lambda arguments, w=word: f"the {w}",
    )


@st.composite
def plans(draw: st.DrawFn) -> dict[str, Any]:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=8, unique=True))
    deferred = draw(st.lists(st.sampled_from(words), min_size=1, unique=True))
    plain = [w for w in words if w not in deferred]
    targets = draw(st.lists(st.sampled_from(deferred), min_size=0, max_size=3))
    return {
        "plain": plain,
        "deferred": deferred,
        "targets": targets,
        "native": draw(st.sampled_from(["never", "auto"])),
        "search": draw(st.sampled_from(["bm25", "regex", "hosted"])),
        "adapter": draw(st.sampled_from(sorted(ADAPTERS))),
        "plain_call": bool(plain) and draw(st.booleans()),
    }


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans())
def test_whatever_is_deferred_or_revealed_the_fake_accepts_every_request(
    plan: dict[str, Any],
) -> None:
    steps: list[Any] = []
    revealed: set[str] = set()
    for word in plan["targets"]:
        if word not in revealed:  # a revealed tool is called without searching again
            steps.append(search(word))
            revealed.add(word)
        steps.append(call(f"get_{word}"))
    if plan["plain_call"]:
        steps.append(call(f"get_{plan['plain'][0]}"))
    steps.append(reply("done"))
    scripted = ScriptedModel(steps)
    model: Model = ADAPTERS[plan["adapter"]](scripted)
    strategy = ToolSearch(
        [_tool(w) for w in plan["deferred"]], search=plan["search"], native=plan["native"]
    )
    result = run(model, "go", tools=[_tool(w) for w in plan["plain"]], strategies=[strategy])
    assert result.output == "done"
    trace = result.trace
    assert trace.iterations[0].deferred == tuple(f"get_{w}" for w in plan["deferred"])
    found = [n for it in trace.iterations for n in it.discovered]
    assert {f"get_{w}" for w in plan["targets"]} <= set(found)
    assert sum(it.searches for it in trace.iterations) == len(set(plan["targets"]))
    for it in trace.iterations:  # a deferred tool is never offered before it is found
        assert not set(it.deferred) & set(it.offered)


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_a_scripted_call_of_an_unrevealed_tool_is_a_script_error(adapter: str) -> None:
    from harness._errors import HarnessError

    model = ADAPTERS[adapter](ScriptedModel([call("get_apple"), reply("done")]))
    with pytest.raises(HarnessError) as info:
        run(model, "go", tools=[_tool("bridge")], strategies=[ToolSearch([_tool("apple")])])
    chain: list[BaseException] = []
    error: BaseException | None = info.value
    while error is not None and len(chain) < 10:  # behind a fake, the script error is a cause
        chain.append(error)
        error = error.__cause__ or error.__context__
    assert any("'get_apple' matches no offered tool" in str(e) for e in chain), chain
