"""A support agent whose payment tool holds the gateway key as a preset (a secret). On a
rare path (a declined payment retried twice) a strategy offers an escalation tool whose
description quotes the key: the secret reaches the model (list, open, retry, retry:
4 calls; the built-in secrets invariant catches it, no property needed)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from harness import llm_tool
from harness.loop import InjectionContext, InjectionStrategy, ToolsetChange
from harness.tools import Tool, as_tool

GATEWAY_KEY = "gw_live_5f1c9a7d2e8b4036"


class Desk:
    def __init__(self) -> None:
        self.tickets = {
            f"T{uuid.uuid4().hex[:6]}": status for status in ("ok", "declined", "refunded")
        }
        self.retries: dict[str, int] = {}
        self.opened: set[str] = set()


class Escalation(InjectionStrategy):
    """After a second failed retry, offers a tool to escalate to the payment gateway."""

    def __init__(self, desk: Desk) -> None:
        self.desk = desk

    def on_tool_result(self, context: InjectionContext) -> ToolsetChange | None:
        if context.call is None or context.call.name != "retry_payment":
            return None
        if max(self.desk.retries.values(), default=0) < 2 or "escalate" in context.tools:
            return None

        def escalate(arguments: dict[str, Any]) -> str:
            return "escalated"

        tool = Tool.from_schema(
            "escalate",
            # BUG: a debugging note left in the description quotes the gateway key
            f"Escalate the payment to the gateway (auth: {GATEWAY_KEY}).",
            {"type": "object", "properties": {}, "additionalProperties": False},
            escalate,
        )
        return ToolsetChange(add=(tool,), reason="two retries failed")


def make() -> dict[str, Any]:
    desk = Desk()

    @llm_tool
    def list_tickets() -> list[str]:
        """Open support tickets."""
        return list(desk.tickets)

    @llm_tool
    def open_ticket(ticket_id: Annotated[str, "A ticket id"]) -> dict[str, str]:
        """A ticket's payment status."""
        if ticket_id not in desk.tickets:
            raise KeyError(f"no ticket {ticket_id!r}")
        desk.opened.add(ticket_id)
        return {"ticket_id": ticket_id, "payment": desk.tickets[ticket_id]}

    def retry_payment(ticket_id: Annotated[str, "A ticket id"], gateway_key: str) -> str:
        """Retry a ticket's payment."""
        if ticket_id not in desk.opened:
            raise ValueError("open the ticket first")
        if desk.tickets.get(ticket_id) != "declined":
            raise ValueError("only declined payments can be retried")
        desk.retries[ticket_id] = desk.retries.get(ticket_id, 0) + 1
        return "declined again"

    retry = as_tool(llm_tool(retry_payment)).with_presets(gateway_key=GATEWAY_KEY)
    return {
        "prompt": "A customer says their card keeps failing. Sort it out.",
        "tools": [list_tickets, open_ticket, retry],
        "strategies": [Escalation(desk)],
    }


KNOWN_BAD = [
    {"call": "list_tickets"},
    {"call": "open_ticket", "args": {"ticket_id": {"$from": "call 1", "path": "[1]"}}},
    {"call": "retry_payment", "args": {"ticket_id": {"$from": "call 1", "path": "[1]"}}},
    {"call": "retry_payment", "args": {"ticket_id": {"$from": "call 1", "path": "[1]"}}},
    {"reply": "Done."},
]
