"""Tool removal safety: without a policy the validating fake returns the API's 400; with it the
run succeeds (exclusive facade and state-machine scenarios, which remove tools)."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given, settings, strategies as st
from wire_helpers import DEFINITIONS, TOOLS, WEATHER, model_request

from fixtures.orders_fsm import Order
from harness import run
from harness._errors import ProviderError
from harness.formats.anthropic_messages import (
    NO_TOOLS_DEFINED,
    request_body as messages_params,
    validate_body as validate_messages_body,
)
from harness.injection import StateMachine
from harness.loop import Model, ModelSettings
from harness.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from harness.models import (
    ANTHROPIC_CAPABILITIES,
    AnthropicModel,
    OpenAIWireTransport,
    ScriptedModel,
    ToolHistoryError,
    apply_tool_history,
    call,
    fake_anthropic_client,
    missing_tools,
    reply,
)
from harness.models._tool_history import REMOVED_MARKER, ToolMemory
from harness.scenarios import Scenario, load_scenario, run_scenario
from harness.tools import ToolChoice

CATALOG = Path(__file__).resolve().parents[2] / "scenarios"
USED = [
    UserMessage(content="q"),
    AssistantMessage(content="checking", tool_calls=(WEATHER,)),
    ToolMessage(tool_call_id="call_a", content="21C"),
]


def test_missing_tools_per_rule() -> None:
    none_offered = model_request(USED, tools=[])
    other_offered = model_request(USED, tools=[TOOLS[1]])
    assert missing_tools(none_offered, "free") == []
    assert missing_tools(none_offered, "tools_defined") == ["get_weather"]
    assert missing_tools(other_offered, "tools_defined") == []
    assert missing_tools(other_offered, "tools_declared") == ["get_weather"]
    assert missing_tools(model_request(USED), "tools_declared") == []
    assert missing_tools(model_request(tools=[]), "tools_defined") == []  # no tool blocks yet


def test_redeclare_keeps_the_definition_marks_it_and_forbids_calls_when_nothing_is_offered() -> (
    None
):
    memory = ToolMemory()
    memory.remember(DEFINITIONS)
    request = model_request(USED, tools=[], settings=ModelSettings(tool_choice="auto"))
    fixed = apply_tool_history(request, rule="tools_defined", policy="redeclare", memory=memory)
    assert fixed.tool_names == ("get_weather",)
    function = fixed.tools[0]
    assert function.description == REMOVED_MARKER + "Weather of a city."
    assert function.parameters == TOOLS[0]["function"]["parameters"]
    assert fixed.settings.tool_choice == ToolChoice.none()
    assert list(fixed.messages) == USED
    still = model_request(USED, tools=[TOOLS[1]], settings=ModelSettings(tool_choice="auto"))
    fixed = apply_tool_history(still, rule="tools_declared", policy="redeclare")
    assert fixed.tool_names == ("get_time", "get_weather")
    assert (
        fixed.settings.tool_choice == ToolChoice.auto()
    )  # something is offered: calls are refused by the loop
    assert fixed.tools[1].parameters == {"type": "object", "properties": {}}


def test_rewrite_turns_calls_to_missing_tools_into_text_after_the_kept_results() -> None:
    kept = WEATHER.model_copy(update={"id": "k1", "name": "get_time"})
    history = [
        UserMessage(content="q"),
        AssistantMessage(tool_calls=(WEATHER, kept)),
        ToolMessage(tool_call_id="call_a", content="21C"),
        ToolMessage(tool_call_id="k1", content="noon"),
        AssistantMessage(content="done"),
    ]
    request = model_request(history, tools=[TOOLS[1]])
    fixed = apply_tool_history(request, rule="tools_declared", policy="rewrite")
    assert list(fixed.messages) == [
        UserMessage(content="q"),
        AssistantMessage(content='[called get_weather with {"city": "Paris"}]', tool_calls=(kept,)),
        ToolMessage(tool_call_id="k1", content="noon"),
        UserMessage(content="[result of get_weather]: 21C"),
        AssistantMessage(content="done"),
    ]
    assert fixed.tools == request.tools


def test_fail_names_the_tools_and_the_fix_and_off_changes_nothing() -> None:
    request = model_request(USED, tools=[], iteration=3)
    with pytest.raises(ToolHistoryError) as info:
        apply_tool_history(request, rule="tools_defined", policy="fail", provider="the API")
    message = str(info.value)
    assert "iteration 3" in message and "['get_weather']" in message
    assert "tool_history='redeclare'" in message and "'rewrite'" in message
    assert apply_tool_history(request, rule="tools_defined", policy="off") is request
    assert apply_tool_history(request, rule="free", policy="fail") is request


# -- the loop against the validating fake ------------------------------------------------


class Checkout(enum.Enum):
    PAYMENT = "payment"
    CANCELLED = "cancelled"


def _final_state_machine() -> StateMachine:
    """Orders where cancelling leads to a final state with no tools at all."""
    order = Order()
    return StateMachine(
        Checkout,
        initial=Checkout.PAYMENT,
        tools={Checkout.PAYMENT: [order.pay, order.cancel_order], Checkout.CANCELLED: []},
        transitions={"cancel_order": Checkout.CANCELLED},
    )


def _run_final_state(policy: str) -> tuple[object, OpenAIWireTransport]:
    served = ScriptedModel([call("cancel_order"), reply("The order is cancelled.")])
    transport = OpenAIWireTransport(served)
    model = AnthropicModel(fake_anthropic_client(transport), "claude-x", tool_history=policy)  # type: ignore[arg-type]
    return run(model, "Cancel my order.", strategies=[_final_state_machine()]), transport


def test_final_state_without_tools_gets_the_apis_400_without_the_policy() -> None:
    with pytest.raises(ProviderError) as info:
        _run_final_state("off")
    assert info.value.status == 400 and info.value.code == "invalid_request_error"
    assert NO_TOOLS_DEFINED in str(info.value)
    trace = info.value.trace
    assert trace is not None and trace.iterations[-1].offered == ()


@pytest.mark.parametrize("policy", ["redeclare", "rewrite"])
def test_final_state_without_tools_succeeds_with_the_policy(policy: str) -> None:
    result, transport = _run_final_state(policy)
    assert result.output == "The order is cancelled."  # type: ignore[attr-defined]
    assert result.trace.iterations[-1].offered == ()  # type: ignore[attr-defined]
    last = transport.requests[-1].body
    if policy == "redeclare":
        assert [t["name"] for t in last["tools"]] == ["cancel_order"]
        assert last["tools"][0]["description"].startswith(REMOVED_MARKER)
        assert last["tool_choice"] == {"type": "none"}
    else:
        assert "tools" not in last
        blocks = [
            b for m in last["messages"] if isinstance(m["content"], list) for b in m["content"]
        ]
        assert all(b["type"] == "text" for b in blocks)
        assert last["messages"][1] == {
            "role": "assistant",
            "content": "[called cancel_order with {}]",
        }
        assert last["messages"][2]["content"].startswith("[result of cancel_order]: ")


def test_final_state_fail_policy_stops_before_sending() -> None:
    with pytest.raises(ToolHistoryError, match=r"\['cancel_order'\]") as info:
        _run_final_state("fail")
    assert info.value.trace is not None


@dataclasses.dataclass(frozen=True)
class Served(Scenario):
    """A catalog scenario whose script is served behind another model (an adapter + fake)."""

    wrap: Callable[[Model], Model] = lambda m: m

    def build_model(self) -> Model:
        return self.wrap(super().build_model())


REMOVING = [
    "unfolding/exclusive_after_use",
    "state_machine/order_flow",
    "state_machine/back_to_browsing",
]


def _strict(policy: str) -> Callable[[Model], Model]:
    def wrap(served: Model) -> Model:
        client = fake_anthropic_client(served, profile="strict")
        declared = dataclasses.replace(ANTHROPIC_CAPABILITIES, tool_history="tools_declared")
        return AnthropicModel(client, "claude-x", capabilities=declared, tool_history=policy)  # type: ignore[arg-type]

    return wrap


@pytest.mark.parametrize("name", REMOVING)
def test_strict_profile_refuses_removed_used_tools_without_the_policy(name: str) -> None:
    scenario = load_scenario(CATALOG / f"{name}.yaml")
    outcome = run_scenario(Served(spec=scenario.spec, path=scenario.path, wrap=_strict("off")))
    assert not outcome.passed
    assert isinstance(outcome.error, ProviderError) and outcome.error.status == 400
    assert "which is not declared in 'tools' on this request" in str(outcome.error)


@pytest.mark.parametrize("name", REMOVING)
@pytest.mark.parametrize("policy", ["redeclare", "rewrite"])
def test_strict_profile_accepts_the_run_with_the_policy_and_the_trace_is_unchanged(
    name: str, policy: str
) -> None:
    scenario = load_scenario(CATALOG / f"{name}.yaml")
    in_process = run_scenario(scenario)
    outcome = run_scenario(Served(spec=scenario.spec, path=scenario.path, wrap=_strict(policy)))
    assert outcome.passed, outcome.problem
    assert outcome.trace is not None and in_process.trace is not None
    assert outcome.trace.to_dict() == in_process.trace.to_dict()


@pytest.mark.parametrize(
    "name", [*REMOVING, "state_machine/resumed_run", "unfolding/exclusive_file_tools"]
)
def test_the_default_anthropic_rule_accepts_scenarios_that_keep_a_tool(name: str) -> None:
    """These keep at least one tool offered: the API itself accepts them with no policy."""
    scenario = load_scenario(CATALOG / f"{name}.yaml")
    wrap = lambda m: AnthropicModel(fake_anthropic_client(m), "claude-x", tool_history="off")  # noqa: E731
    outcome = run_scenario(Served(spec=scenario.spec, path=scenario.path, wrap=wrap))
    assert outcome.passed, outcome.problem


_TEXT = st.text(min_size=1, max_size=8)


@st.composite
def loop_histories(draw: st.DrawFn) -> list[Message]:
    """Histories like the loop sends: user, then turns of calls answered by their results."""
    messages: list[Message] = [UserMessage(content=draw(_TEXT))]
    for turn in range(draw(st.integers(0, 4))):
        names = draw(st.lists(st.sampled_from(["get_weather", "get_time"]), min_size=1, max_size=3))
        calls = tuple(ToolCall(id=f"c{turn}_{i}", name=n) for i, n in enumerate(names))
        messages.append(AssistantMessage(content=draw(st.none() | _TEXT), tool_calls=calls))
        messages.extend(ToolMessage(tool_call_id=c.id, content=draw(_TEXT)) for c in calls)
        if draw(st.booleans()):
            messages.append(UserMessage(content=draw(_TEXT)))
    return messages


PARALLEL_PARTLY_REMOVED: list[Message] = [
    UserMessage(content="q"),
    AssistantMessage(
        tool_calls=(ToolCall(id="a", name="get_weather"), ToolCall(id="b", name="get_time"))
    ),
    ToolMessage(tool_call_id="a", content="1"),
    ToolMessage(tool_call_id="b", content="2"),
]


@settings(max_examples=150, deadline=None)
@example(PARALLEL_PARTLY_REMOVED, {"get_time"}, "rewrite", "tools_declared")
@given(
    loop_histories(),
    st.sets(st.sampled_from(["get_weather", "get_time"])),
    st.sampled_from(["redeclare", "rewrite"]),
    st.sampled_from(["tools_defined", "tools_declared"]),
)
def test_property_any_removal_is_made_acceptable(
    history: list[Message], kept: set[str], policy: str, rule: str
) -> None:
    """Whatever a strategy removed, the policy yields a body the validating fake accepts."""
    request = model_request(history, tools=[t for t in TOOLS if t["function"]["name"] in kept])
    memory = ToolMemory()
    memory.remember(DEFINITIONS)
    fixed = apply_tool_history(request, rule=rule, policy=policy, memory=memory)  # type: ignore[arg-type]
    profile = "strict" if rule == "tools_declared" else "default"
    validate_messages_body(messages_params(fixed, model="m"), profile=profile)
    assert set(request.tool_names) <= set(fixed.tool_names)  # nothing offered is taken away
    if policy == "redeclare":
        assert list(fixed.messages) == history  # the history is kept as it is
