"""A refunds agent written by hand over the ``openai`` SDK (Chat Completions), fuzzed
through the wire. Planted bug: each refund is checked against the order's total, not
against what is left after earlier refunds, so two refunds of one order (each at most
100.00) can return more than it cost (list, refund, refund: 3 calls)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from harness import RunResult

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "list_orders",
            "description": "The customer's recent orders: id, item and total.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "refund",
            "description": "Refund part of an order (at most 100.00 per refund).",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string"},
                    "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 100},
                },
                "required": ["order_id", "amount"],
            },
        },
    },
]


class Shop:
    def __init__(self) -> None:
        self.orders = {
            f"o-{uuid.uuid4().hex[:6]}": order for order in (("kettle", 120.0), ("mug", 9.5))
        }
        self.refunded: dict[str, float] = dict.fromkeys(self.orders, 0.0)

    def call(self, name: str, args: dict[str, Any]) -> Any:
        if name == "list_orders":
            return [{"order_id": o, "item": i, "total": t} for o, (i, t) in self.orders.items()]
        if name == "refund":
            order = args["order_id"]
            if order not in self.orders:
                raise KeyError(f"no order {order!r}")
            amount = float(args["amount"])
            if not 0 < amount <= 100:
                raise ValueError("a refund is more than 0 and at most 100.00")
            if amount > self.orders[order][1]:  # BUG: earlier refunds are not subtracted
                raise ValueError("more than the order's total")
            self.refunded[order] += amount
            return {"order_id": order, "refunded": amount, "status": "refunded"}
        raise KeyError(f"no tool {name!r}")


def make(base_url: str, api_key: str) -> dict[str, Any]:
    from openai import OpenAI

    client = OpenAI(base_url=base_url, api_key=api_key, max_retries=1)
    shop = Shop()

    def run(prompt: str) -> str | None:
        messages: list[Any] = [
            {"role": "system", "content": "You are a careful refunds assistant."},
            {"role": "user", "content": prompt},
        ]
        for _ in range(10):
            answer = client.chat.completions.create(
                model="gpt-4o-mini", messages=messages, tools=TOOLS
            )
            message = answer.choices[0].message
            if not message.tool_calls:
                return message.content
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                try:
                    result = json.dumps(
                        shop.call(call.function.name, json.loads(call.function.arguments))
                    )
                except (KeyError, ValueError, TypeError) as exc:
                    result = f"error: {exc}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        return None

    return {"run": run, "prompt": "My kettle arrived broken, please refund it.", "state": shop}


def refunds_within_totals(run: RunResult) -> None:
    shop: Shop = run.state
    over = {o: r for o, r in shop.refunded.items() if r > shop.orders[o][1] + 1e-9}
    assert not over, f"refunded more than the order cost: {over}"


_REFUND = {
    "call": "refund",
    "args": {"order_id": {"$from": "call 1", "path": "[0].order_id"}, "amount": 100},
}
KNOWN_BAD = [{"call": "list_orders"}, _REFUND, _REFUND, {"reply": "Done."}]
