"""A stock-reservation agent on the OpenAI Agents SDK (Responses API), fuzzed through
the wire. Planted bug: a reservation is checked against the stock on the shelf, which
reservations do not lower, so reservations of one item add up past its stock (list,
reserve, reserve: 3 calls)."""

from __future__ import annotations

import uuid
from typing import Any

from harness import RunResult


class Warehouse:
    def __init__(self) -> None:
        self.stock = {f"sku-{uuid.uuid4().hex[:5]}": n for n in (4, 9)}
        self.reserved: dict[str, int] = dict.fromkeys(self.stock, 0)


def make(base_url: str, api_key: str) -> dict[str, Any]:
    import agents
    from openai import AsyncOpenAI

    warehouse = Warehouse()

    @agents.function_tool  # type: ignore[untyped-decorator]
    def list_items() -> list[dict[str, Any]]:
        """Items with the stock on the shelf."""
        return [{"sku": s, "stock": n} for s, n in warehouse.stock.items()]

    @agents.function_tool  # type: ignore[untyped-decorator]
    def reserve(sku: str, quantity: int) -> dict[str, Any]:
        """Reserve units of an item for the customer (never more than in stock)."""
        if sku not in warehouse.stock:
            raise KeyError(f"no item {sku!r}")
        if not 1 <= quantity <= 5:
            raise ValueError("reserve 1 to 5 units at a time")
        if quantity > warehouse.stock[sku]:  # BUG: units reserved before are not subtracted
            raise ValueError("not enough stock")
        warehouse.reserved[sku] += quantity
        return {"sku": sku, "reserved": warehouse.reserved[sku]}

    config = agents.RunConfig(tracing_disabled=True)  # no trace leaves the machine

    async def run(prompt: str) -> Any:
        # the client lives on the run's event loop: opened and closed in it
        async with AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=1) as client:
            agent = agents.Agent(
                name="stock",
                instructions="You reserve stock for customers.",
                tools=[list_items, reserve],
                model=agents.OpenAIResponsesModel(model="gpt-4o-mini", openai_client=client),
            )
            result = await agents.Runner.run(agent, prompt, run_config=config, max_turns=12)
            return result.final_output

    return {"run": run, "prompt": "Hold as many units as you can for me.", "state": warehouse}


def reservations_within_stock(run: RunResult) -> None:
    warehouse: Warehouse = run.state
    over = {s: r for s, r in warehouse.reserved.items() if r > warehouse.stock[s]}
    assert not over, f"reserved beyond stock: {over}"


# the SDK sends a tool's value as its str(): the sku is a word of that text
_RESERVE = {"call": "reserve", "args": {"sku": {"$from": "call 1", "word": 1}, "quantity": 4}}
KNOWN_BAD = [{"call": "list_items"}, _RESERVE, _RESERVE, {"reply": "Done."}]
