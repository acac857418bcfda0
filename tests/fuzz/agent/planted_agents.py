"""Small agents for the tests of ``fuzz_agent`` (named ``planted_agents:...``).

Each factory makes a fresh world per call (fresh ids too, so replays must use
references); the bad ones are bad on purpose (shared state, a crashing strategy, a
property that raises the wrong exception, a factory that fails).
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Annotated, Any

from harness import EntityDiscovery, RunResult, Secret, ToolChoice, llm_tool, tool_provider
from harness.loop import InjectionContext, InjectionStrategy, ToolsetChange
from harness.tools import Tool, as_tool


class Inbox:
    """Two notes with fresh ids; deleting the pinned one is the planted bug."""

    def __init__(self) -> None:
        self.notes = {f"n-{uuid.uuid4().hex[:8]}": pinned for pinned in (False, True)}
        self.deleted: list[tuple[str, bool]] = []


def _inbox_tools(inbox: Inbox) -> list[Any]:
    @llm_tool
    def list_notes() -> list[dict[str, Any]]:
        """The notes: id and whether it is pinned."""
        return [{"note_id": n, "pinned": p} for n, p in inbox.notes.items()]

    @llm_tool
    def delete_note(note_id: Annotated[str, "A note id"]) -> str:
        """Delete a note (BUG: pinned notes too)."""
        if note_id not in inbox.notes:
            raise KeyError(f"no note {note_id!r}")
        inbox.deleted.append((note_id, inbox.notes.pop(note_id)))
        return "deleted"

    return [list_notes, delete_note]


def notes() -> dict[str, Any]:
    """A two-call bug: list the notes, delete the pinned one."""
    inbox = Inbox()
    return {"prompt": "Tidy my notes.", "tools": _inbox_tools(inbox), "state": {"inbox": inbox}}


def pinned_notes_stay(run: RunResult) -> None:
    inbox: Inbox = run.state["inbox"]
    gone = [n for n, pinned in inbox.deleted if pinned]
    assert not gone, f"pinned notes deleted: {gone}"


def sound() -> dict[str, Any]:
    """No bug: reading only."""

    @llm_tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    return {"prompt": "Weather in Oslo?", "tools": [weather], "strategies": []}


_SHARED = Inbox()


def shares_state() -> dict[str, Any]:
    """Bad: every call returns tools over one module-level inbox."""
    return {"prompt": "Tidy my notes.", "tools": _inbox_tools(_SHARED)}


_ONE_STRATEGY = InjectionStrategy()


def same_strategy() -> dict[str, Any]:
    """Bad: the same strategy instance on every call."""
    return {"prompt": "Hi.", "tools": [], "strategies": [_ONE_STRATEGY]}


def raises() -> dict[str, Any]:
    raise ConnectionError("the agent's database is down")


def exits() -> dict[str, Any]:
    raise SystemExit(0)


def wrong_shape() -> list[str]:
    return ["prompt", "tools"]


def unknown_key() -> dict[str, Any]:
    return {"prompt": "Hi.", "tool": []}


def property_with_a_bug(run: RunResult) -> None:
    run.state["missing"]


class Crashes(InjectionStrategy):
    """Raises in ``on_tool_result`` after a second call."""

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        if sum(context.called.values()) >= 2:
            raise RuntimeError("planted crash")
        return None


def crashing() -> dict[str, Any]:
    """A strategy that crashes once two calls succeeded."""
    return {**sound(), "strategies": [Crashes()]}


def hangs() -> dict[str, Any]:
    """A tool that never returns."""

    @llm_tool
    def wait_for_reply() -> str:
        """Waits for the user's reply."""
        threading.Event().wait()
        return "unreachable"

    return {"prompt": "Ask the user.", "tools": [wait_for_reply]}


def to_the_limit() -> dict[str, Any]:
    """A tight iteration limit: runs end in ``MaxIterationsExceeded`` now and then."""
    return {**sound(), "max_iterations": 2}


SEEN: list[Any] = []


def records_errors(run: Any) -> None:
    """Property: remembers every run that ended in an error (the tests read them)."""
    if run.error is not None:
        SEEN.append(run)


LEAKED_KEY = "sk-live-0f9e8d7c6b5a4321"


class _LeakAfterLookup(InjectionStrategy):
    """After the first lookup, offers a tool whose description quotes the preset key."""

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        if context.call is None or context.call.name != "lookup" or "escalate" in context.tools:
            return None
        tool = Tool.from_schema(
            "escalate",
            f"Escalate an order (auth: {LEAKED_KEY}).",  # the planted leak
            {"type": "object", "properties": {}},
            lambda arguments: "escalated",
        )
        return ToolsetChange(add=(tool,), reason="a lookup happened")


def leaky() -> dict[str, Any]:
    """A preset secret that reaches the model: after a lookup, a strategy offers a tool
    whose description quotes it (tool results are scrubbed; descriptions are the user's
    text). The built-in secrets invariant catches it."""

    def lookup(order_id: str, api_key: str) -> str:
        """Look an order up."""
        return f"order {order_id} found"

    tool = as_tool(llm_tool(lookup)).with_presets(api_key=LEAKED_KEY)
    return {"prompt": "Where is order 17?", "tools": [tool], "strategies": [_LeakAfterLookup()]}


def _two_tools() -> list[Any]:
    @llm_tool
    def ping() -> str:
        """Ping."""
        return "pong"

    @llm_tool
    def reset() -> str:
        """Reset everything."""
        return "reset"

    return [ping, reset]


def forced_ping() -> dict[str, Any]:
    """The agent forces ``ping`` on every request (``tool_choice``): a model never calls
    ``reset``, so the fuzzer must not either."""
    return {"prompt": "Check.", "tools": _two_tools(), "tool_choice": "ping", "max_iterations": 4}


def only_ping_allowed() -> dict[str, Any]:
    """``ping`` is the only tool the model may call (``ToolChoice.allowed``)."""
    choice = ToolChoice(mode="auto", allowed=("ping",))
    return {"prompt": "Check.", "tools": _two_tools(), "tool_choice": choice}


def never_reset(run: RunResult) -> None:
    called = [c.name for it in run.trace.iterations for c in it.calls]
    assert "reset" not in called, f"reset was called: {called}"


ACCOUNT_KEY = "sk-live-planted-ACCOUNT-0123456789"
"""A preset API key that also keys the account a finder returns (issue 34 section 1)."""
TENANT = "tenant-plain-4242"
"""A plain call-context value (hidden from messages like a tool error hides it)."""


@tool_provider(prefix="acct")
class Account:
    """An account keyed by the API key that found it: its tools' names must not carry it."""

    def __init__(self, id: str) -> None:
        self.id = id

    @llm_tool
    def close(self) -> str:
        """Close the account."""
        return "closed"


def keyed_accounts() -> dict[str, Any]:
    """Discovery keyed by a preset API key: the finder returns the key's own account."""

    def accounts(api_key: str) -> list[Account]:
        """The accounts of the key's owner."""
        return [Account(api_key)]

    tool = as_tool(accounts, presets={"api_key": ACCOUNT_KEY})
    return {
        "prompt": "Tidy my accounts.",
        "tools": [tool],
        "strategies": [EntityDiscovery()],
        "context": {"tenant": TENANT},
    }


def no_account_closed(run: RunResult) -> None:
    """Fails once an account is closed, quoting the key and the tenant (user text that
    the reports must scrub)."""
    closed = [c.name for c in run.trace.calls if c.name.startswith("acct_") and not c.is_error]
    assert not closed, (
        f"account of {ACCOUNT_KEY} ({ACCOUNT_KEY.upper()!r}, {Secret(ACCOUNT_KEY)}) closed by "
        f"{closed} for tenant {TENANT}"
    )


FOREVER = 3600.0
"""How long the sleepy agents sleep: far past any budget (the watchdog must stop them)."""
FACTORY_CALLS = [0]
"""Calls of ``sleepy_from_fifth`` (a test resets it)."""


def sleepy_factory() -> dict[str, Any]:
    """Bad: the factory never returns."""
    time.sleep(FOREVER)
    return sound()


def sleepy_from_fifth() -> dict[str, Any]:
    """Bad: the factory's fifth call (an example, after the fuzzer's own checks) hangs."""
    FACTORY_CALLS[0] += 1
    if FACTORY_CALLS[0] >= 5:
        time.sleep(FOREVER)
    return sound()


def sleepy_property(run: RunResult) -> None:
    """Bad: the property never returns."""
    time.sleep(FOREVER)


class Stop(BaseException):
    """A BaseException of the agent's own (neither Exception nor SystemExit)."""


def raises_base_exception() -> dict[str, Any]:
    """Bad: the factory raises a ``BaseException`` subclass."""
    raise Stop("the factory stopped")


def property_raising_generator_exit(run: RunResult) -> None:
    """Bad: the property raises ``GeneratorExit``."""
    raise GeneratorExit("closed")


def printing() -> dict[str, Any]:
    """Sound, but its factory and its tool print (what --json must not be corrupted by)."""
    print("printed by the factory")

    @llm_tool
    def weather(city: str) -> str:
        """The weather in a city."""
        print("printed by the tool")
        return f"sunny in {city}"

    return {"prompt": "Weather in Oslo?", "tools": [weather], "strategies": []}


def printing_property(run: RunResult) -> None:
    """A property that prints."""
    print("printed by the property")


def tickets() -> dict[str, Any]:
    """Tickets with uuid ids (as the docs' example); closing the VIP ticket is the bug.
    Unknown ids fail the tool: the fuzzer causes many such failures."""
    vip = {f"t-{uuid.uuid4()}": flag for flag in (False, True)}
    closed: list[tuple[bool, str]] = []

    @llm_tool
    def list_tickets() -> list[dict[str, Any]]:
        """Open tickets: id and whether the customer is a VIP."""
        return [{"ticket_id": t, "vip": v} for t, v in vip.items()]

    @llm_tool
    def close_ticket(ticket_id: str, resolution: str) -> str:
        """Close a ticket with a resolution note (VIP tickets stay open)."""
        if ticket_id not in vip:
            raise ValueError(f"no ticket {ticket_id!r}")
        closed.append((vip.pop(ticket_id), resolution))  # BUG: VIP tickets too
        return "closed"

    return {
        "prompt": "Close what you can.",
        "tools": [list_tickets, close_ticket],
        "state": {"closed": closed},
    }


def vip_tickets_stay_open(run: RunResult) -> None:
    assert not any(v for v, _ in run.state["closed"]), "a VIP ticket was closed"


def _searchable(native: str) -> dict[str, Any]:
    from harness import ToolSearch

    @llm_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    @llm_tool
    def get_time(city: str) -> str:
        """The local time in a city."""
        return "12:00"

    return {
        "prompt": "Weather in Paris?",
        "strategies": [ToolSearch([get_weather, get_time], native=native)],  # type: ignore[arg-type]
    }


def searched_auto() -> dict[str, Any]:
    """Deferred tools found by ``ToolSearch`` (the provider's native search when it has one)."""
    return _searchable("auto")


def searched_never() -> dict[str, Any]:
    """Deferred tools found by ``ToolSearch``'s own client-side search tool."""
    return _searchable("never")
