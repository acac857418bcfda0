"""A support agent on pydantic-ai (Anthropic Messages), fuzzed through the wire.
Planted bug: goodwill credits are checked one at a time against the 50.00 per-credit
limit but never against the 100.00 per-customer policy, so credits to one customer
add up past it (find, then three credits: 4 calls). The agent validates its structured
answer and retries tools itself: a framework failure is the run's error, for the
property to judge."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from harness import RunResult

POLICY = 100.0
"""Goodwill credit a customer may get in all."""


class Desk:
    def __init__(self) -> None:
        self.customers = {"ann@example.com": "cus-ann", "bo@example.com": "cus-bo"}
        self.credits: dict[str, float] = {c: 0.0 for c in self.customers.values()}


class Reply(BaseModel):
    """The agent's structured answer."""

    summary: str
    credited: float = Field(ge=0)


def make(base_url: str, api_key: str) -> dict[str, Any]:
    import pydantic_ai
    from anthropic import AsyncAnthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    desk = Desk()

    def find_customer(email: str) -> str:
        """The customer id of an email address."""
        found = desk.customers.get(email.strip().lower())
        if found is None:
            raise pydantic_ai.ModelRetry(f"no customer with email {email!r}")
        return found

    def issue_credit(customer_id: str, amount: float) -> dict[str, Any]:
        """Give a customer goodwill credit (at most 50.00 at a time, 100.00 in all)."""
        if customer_id not in desk.credits:
            raise pydantic_ai.ModelRetry(f"no customer {customer_id!r}")
        if not 0 < amount <= 50:  # BUG: the 100.00 policy over all credits is not checked
            raise pydantic_ai.ModelRetry("a credit is more than 0 and at most 50.00")
        desk.credits[customer_id] += amount
        return {"customer_id": customer_id, "credited": amount}

    async def run(prompt: str) -> Reply:
        # the client lives on the run's event loop: opened and closed in it
        async with AsyncAnthropic(base_url=base_url, api_key=api_key) as client:
            provider = AnthropicProvider(anthropic_client=client)
            agent = pydantic_ai.Agent(
                AnthropicModel("claude-haiku-4-5", provider=provider),
                output_type=Reply,
                tools=[find_customer, issue_credit],
                retries=2,
            )
            return (await agent.run(prompt)).output

    prompt = 'Ann ("ann@example.com") waited two weeks for her parcel; make it right.'
    return {"run": run, "prompt": prompt, "state": desk}


def credit_within_policy(run: RunResult) -> None:
    desk: Desk = run.state
    over = {c: v for c, v in desk.credits.items() if v > POLICY + 1e-9}
    assert not over, f"goodwill credit beyond the {POLICY:.2f} policy: {over}"


_CREDIT = {"call": "issue_credit", "args": {"customer_id": {"$from": "call 1"}, "amount": 50}}
KNOWN_BAD = [
    {"call": "find_customer", "args": {"email": "ann@example.com"}},
    _CREDIT,
    _CREDIT,
    _CREDIT,
    {"call": "final_result", "args": {"summary": "credited", "credited": 150}},
]
