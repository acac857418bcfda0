"""The state machine strategy: offered tools follow the state; transitions are traced."""

from __future__ import annotations

import asyncio
import enum
import sys
from pathlib import Path

import pytest

from harness import (
    ScriptedModel,
    StrategyWarning,
    UnreachableStateWarning,
    UsageError,
    arun,
    call,
    calls,
    llm_tool,
    reply,
    run,
)
from harness.injection import StateMachine, StateTransition

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fixtures.orders_fsm import Order, OrderState, order_machine  # noqa: E402

GLOBAL = ("order_status",)
BROWSING = ("search_products", "add_to_cart")
CART = ("add_to_cart", "view_cart", "empty_cart", "checkout")
PAYMENT = ("pay", "cancel_order")


def _offered(result: object) -> list[tuple[str, ...]]:
    return [it.offered for it in result.trace]  # type: ignore[attr-defined]


def _transitions(result: object) -> list[tuple[str | None, str, str | None]]:
    events = result.trace.events_of(StateTransition)  # type: ignore[attr-defined]
    return [(e.from_state, e.to_state, e.tool) for e in events]


def test_offered_tools_follow_the_state_and_every_transition_is_traced() -> None:
    model = ScriptedModel(
        [
            call("add_to_cart", {"sku": "coffee"}),
            call("checkout"),
            call("pay", {"card": "4242"}),
            reply("done"),
        ]
    )
    machine = order_machine()
    result = run(model, "buy", strategies=[machine])
    assert _offered(result) == [
        GLOBAL + BROWSING,
        GLOBAL + CART,
        GLOBAL + PAYMENT,
        (*GLOBAL, "track_shipment"),
    ]
    assert _transitions(result) == [
        (None, "BROWSING", None),
        ("BROWSING", "CART", "add_to_cart"),
        ("CART", "PAYMENT", "checkout"),
        ("PAYMENT", "SHIPPED", "pay"),
    ]
    changes = result.trace.changes
    assert {c.strategy for c in changes} == {"orders"}
    assert changes[1].reason == "orders: BROWSING -> CART after 'add_to_cart'"
    assert changes[1].after_call == "add_to_cart"
    assert changes[1].removed == ("search_products",)
    assert machine.current(result.state) is OrderState.SHIPPED
    assert result.trace.calls[0].content.endswith("[state is now CART]")


def test_calling_a_tool_of_another_state_names_the_current_state_and_where_it_works() -> None:
    model = ScriptedModel([call("pay", {"card": "1"}), reply("ok")], lenient=True)
    result = run(model, "pay", strategies=[order_machine()])
    record = result.trace.calls[0]
    assert record.is_error
    assert record.error_kind == "unknown_tool"
    assert "'pay' works only in state(s) PAYMENT" in record.content
    assert "the current state is BROWSING" in record.content
    assert _offered(result) == [GLOBAL + BROWSING] * 2


def test_a_global_tool_works_everywhere_and_an_error_does_not_transition() -> None:
    model = ScriptedModel([call("order_status"), call("checkout"), reply("x")], lenient=True)
    result = run(model, "go", strategies=[order_machine(start="CART")])
    assert not result.trace.calls[0].is_error
    assert result.trace.calls[1].is_error  # empty cart: checkout raised
    assert _transitions(result) == [(None, "CART", None)]
    assert _offered(result)[-1] == GLOBAL + CART


def test_resume_from_start_argument_and_from_the_run_state() -> None:
    by_start = run(ScriptedModel([reply("x")]), "go", strategies=[order_machine(start="PAYMENT")])
    assert _offered(by_start) == [GLOBAL + PAYMENT]
    by_state = run(
        ScriptedModel([reply("x")]),
        "go",
        strategies=[order_machine()],
        state={"state_machine": "shipped"},
    )
    assert _offered(by_state) == [(*GLOBAL, "track_shipment")]
    assert "resumed from the run state" in by_state.trace.changes[0].reason


def test_a_bad_resume_value_names_the_valid_states() -> None:
    with pytest.raises(UsageError, match=r"state_machine='LOST'.*BROWSING") as info:
        run(
            ScriptedModel([reply("x")]),
            "go",
            strategies=[order_machine()],
            state={"state_machine": "LOST"},
        )
    assert info.value.trace is not None


def test_a_second_call_the_first_one_takes_out_of_the_state_is_not_run() -> None:
    class S(enum.Enum):
        A = 1
        B = 2

    runs: list[str] = []

    @llm_tool
    def go() -> str:
        """Go to B."""
        runs.append("go")
        return "ok"

    machine = StateMachine(S, initial=S.A, tools={S.A: [go]}, transitions={"go": S.B})
    result = run(
        ScriptedModel([calls(call("go"), call("go")), reply("x")]), "go", strategies=[machine]
    )
    assert runs == ["go"]  # the second call never ran
    assert _transitions(result) == [(None, "A", None), ("A", "B", "go")]
    assert result.trace.events_of(StrategyWarning) == []
    second = result.trace.calls[1]
    assert second.error_kind == "state_changed"
    assert second.content == (
        "Tool 'go' was not run: 'go', called before it in this turn, may move "
        "state_machine:s to state B, where 'go' is not offered. Call it again in your next "
        "turn if it is still offered."
    )
    assert _offered(result) == [("go",), ()]


class Checkout(enum.Enum):
    CART = "cart"
    PAYMENT = "payment"
    PAID = "paid"


class Shop:
    """A world the machine must agree with: what really happened."""

    def __init__(self) -> None:
        self.authorized = False
        self.log: list[str] = []

    @llm_tool
    def back_to_cart(self) -> str:
        """Go back to the cart."""
        self.log.append("back_to_cart")
        return "back in the cart"

    @llm_tool
    def authorize_payment(self) -> str:
        """Authorise the payment."""
        self.log.append("authorize_payment")
        self.authorized = True
        return "authorised"

    @llm_tool
    def edit_cart(self) -> str:
        """Change the cart."""
        self.log.append("edit_cart")
        return "edited"

    @llm_tool
    def status(self) -> str:
        """Where the checkout is."""
        self.log.append("status")
        return "ok"

    def machine(self) -> StateMachine:
        return StateMachine(
            Checkout,
            initial=Checkout.PAYMENT,
            tools={
                Checkout.CART: [self.edit_cart],
                Checkout.PAYMENT: [self.back_to_cart, self.authorize_payment],
                Checkout.PAID: [],
            },
            global_tools=[self.status],
            transitions={
                "back_to_cart": Checkout.CART,
                "authorize_payment": Checkout.PAID,
                "edit_cart": Checkout.PAYMENT,
            },
            name="checkout",
        )


@pytest.mark.parametrize("driver", ["sync", "async"])
@pytest.mark.parametrize(
    ("first", "second", "state"),
    [
        ("back_to_cart", "authorize_payment", Checkout.CART),
        ("authorize_payment", "back_to_cart", Checkout.PAID),
    ],
)
def test_two_calls_in_one_turn_leave_the_machine_and_the_world_agreeing(
    driver: str, first: str, second: str, state: Checkout
) -> None:
    """The issue's case: in PAYMENT, back_to_cart and authorize_payment in one turn."""
    shop = Shop()
    machine = shop.machine()
    model = ScriptedModel([calls(call(first), call(second), call("status")), reply("x")])
    if driver == "sync":
        result = run(model, "pay", strategies=[machine])
    else:
        result = asyncio.run(arun(model, "pay", strategies=[machine]))
    assert shop.log == [first, "status"]  # the refused call never ran; a global tool did
    assert shop.authorized is (first == "authorize_payment")
    assert machine.current(result.state) is state
    refused = result.trace.calls[1]
    assert refused.error_kind == "state_changed" and refused.name == second
    assert f"{first!r}, called before it in this turn, may move checkout to state" in (
        refused.content
    )
    assert result.trace.events_of(StrategyWarning) == []


def test_a_later_call_offered_in_every_possible_state_runs() -> None:
    """add_to_cart is offered in BROWSING and in CART: twice in a turn, both run."""
    model = ScriptedModel(
        [
            calls(call("add_to_cart", {"sku": "coffee"}), call("add_to_cart", {"sku": "coffee"})),
            reply("x"),
        ]
    )
    result = run(model, "buy", strategies=[order_machine()])
    assert [c.is_error for c in result.trace.calls] == [False, False]
    assert _transitions(result) == [(None, "BROWSING", None), ("BROWSING", "CART", "add_to_cart")]


def test_a_transition_function_may_lead_anywhere_so_later_state_tools_wait() -> None:
    machine = StateMachine(
        Light,
        initial=Light.RED,
        tools={Light.RED: [switch], Light.GREEN: [switch]},
        global_tools=[look],
        transitions={"switch": lambda value: value},
    )
    model = ScriptedModel(
        [
            calls(call("switch", {"to": "green"}), call("look"), call("switch", {"to": "red"})),
            reply("x"),
        ]
    )
    result = run(model, "go", strategies=[machine])
    first, looked, again = result.trace.calls
    assert not first.is_error and not looked.is_error  # a global tool is offered everywhere
    assert again.error_kind == "state_changed" and "to state BROKEN" in again.content


class Light(enum.Enum):
    RED = "red"
    GREEN = "green"
    BROKEN = "broken"


@llm_tool
def switch(to: str) -> str:
    """Switch the light."""
    return to


@llm_tool
def look() -> str:
    """Look at the light."""
    return "on"


def test_a_transition_function_picks_the_state_or_stays() -> None:
    machine = StateMachine(
        Light,
        initial=Light.RED,
        tools={Light.RED: [switch], Light.GREEN: [switch]},
        global_tools=[look],
        transitions={"switch": lambda value: None if value == "stay" else value},
        announce=False,
    )
    model = ScriptedModel(
        [
            call("switch", {"to": "stay"}),
            call("switch", {"to": "green"}),
            call("switch", {"to": "GREEN"}),
            reply("x"),
        ]
    )
    result = run(model, "go", strategies=[machine])
    assert _transitions(result) == [(None, "RED", None), ("RED", "GREEN", "switch")]
    assert "[state is now" not in result.trace.calls[1].content
    assert machine.targets(Light.RED) == set(Light)


def test_a_transition_function_returning_a_non_state_fails_the_run_clearly() -> None:
    machine = StateMachine(
        Light,
        initial=Light.RED,
        tools={Light.RED: [switch]},
        transitions={"switch": lambda value: value},
    )
    with pytest.raises(UsageError, match=r"transition function for 'switch' returned.*'blue'"):
        run(ScriptedModel([call("switch", {"to": "blue"}), reply("x")]), "go", strategies=[machine])


def test_unreachable_states_warn_at_construction() -> None:
    with pytest.warns(UnreachableStateWarning, match=r"\['GREEN', 'BROKEN'\].*RED"):
        StateMachine(Light, initial=Light.RED, tools={Light.RED: [switch]})
    machine = order_machine()
    assert machine.reachable_from(OrderState.BROWSING) == set(OrderState)
    assert machine.states_of("order_status") == list(OrderState)
    assert machine.states_of("add_to_cart") == [OrderState.BROWSING, OrderState.CART]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"initial": "RED"}, "initial must be a member of Light"),
        ({"start": 3}, "start must be a member of Light"),
        ({"tools": {"RED": [switch]}}, "a key of tools must be a member"),
        ({"transitions": {"jump": Light.GREEN}}, "transition for unknown tool 'jump'"),
        ({"transitions": {"switch": "GREEN"}}, "the target of 'switch' must be a member"),
        ({"global_tools": [switch]}, "tool 'switch' is global and also listed for state RED"),
    ],
)
def test_bad_definitions_raise_one_clear_usage_error(
    kwargs: dict[str, object], message: str
) -> None:
    arguments = {
        "initial": Light.RED,
        "tools": {Light.RED: [switch]},
        "transitions": {"switch": Light.GREEN},
        **kwargs,
    }
    with pytest.raises(UsageError, match=message):
        StateMachine(Light, **arguments)  # type: ignore[arg-type]


def test_two_different_tools_with_one_name_and_a_non_enum_are_rejected() -> None:
    @llm_tool(name="switch")
    def other(to: str) -> str:
        """Another switch."""
        return to

    with pytest.raises(UsageError, match="two different tools are named 'switch'"):
        StateMachine(Light, initial=Light.RED, tools={Light.RED: [switch], Light.GREEN: [other]})
    with pytest.raises(UsageError, match="states must be an Enum class"):
        StateMachine(dict, initial=Light.RED, tools={})  # type: ignore[arg-type]


def test_tools_passed_to_the_run_are_aligned_with_the_start_state() -> None:
    order = Order()
    with pytest.warns(
        UnreachableStateWarning, match=r"mini: state\(s\) \['SHIPPED', 'CANCELLED'\]"
    ):
        machine = StateMachine(
            OrderState,
            initial=OrderState.BROWSING,
            tools={
                OrderState.BROWSING: [order.search_products],
                OrderState.CART: [order.view_cart],
            },
            transitions={"search_products": OrderState.CART, "view_cart": OrderState.PAYMENT},
            name="mini",
        )
    model = ScriptedModel([reply("x")])
    result = run(model, "go", tools=[order.view_cart, order.search_products], strategies=[machine])
    assert _offered(result) == [("search_products",)]
    assert result.trace.changes[0].removed == ("view_cart",)
