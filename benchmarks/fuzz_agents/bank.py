"""A banking agent. Planted bug: the overdraft check is off by one, so withdrawing exactly
one more than the balance goes through (list, withdraw: 2 calls, a numeric boundary)."""

from __future__ import annotations

import random
import uuid
from typing import Annotated, Any

from harness import RunResult, llm_tool


class Bank:
    def __init__(self) -> None:
        rng = random.Random(7)  # the same amounts every run (ids are fresh all the same)
        self.balances = {f"acc-{uuid.uuid4().hex[:8]}": rng.randrange(100, 5000) for _ in range(2)}


def make() -> dict[str, Any]:
    bank = Bank()

    @llm_tool
    def list_accounts() -> list[dict[str, Any]]:
        """The customer's accounts with their balances (whole euros)."""
        return [{"account_id": a, "balance": b} for a, b in bank.balances.items()]

    @llm_tool
    def withdraw(
        account_id: Annotated[str, "An account id"],
        amount: Annotated[int, "Whole euros, more than 0"],
    ) -> dict[str, Any]:
        """Withdraw money (never more than the balance)."""
        if account_id not in bank.balances:
            raise KeyError(f"no account {account_id!r}")
        if amount <= 0:
            raise ValueError("the amount must be more than 0")
        if amount > bank.balances[account_id] + 1:  # BUG: should be > balance
            raise ValueError("insufficient funds")
        bank.balances[account_id] -= amount
        return {"account_id": account_id, "balance": bank.balances[account_id]}

    return {
        "prompt": "Take out the cash I need for the trip.",
        "tools": [list_accounts, withdraw],
        "strategies": [],
        "state": {"bank": bank},
    }


def no_overdraft(run: RunResult) -> None:
    bank: Bank = run.state["bank"]
    overdrawn = {a: b for a, b in bank.balances.items() if b < 0}
    assert not overdrawn, f"accounts overdrawn: {overdrawn}"


KNOWN_BAD = [
    {"call": "list_accounts"},
    {
        "call": "withdraw",
        "args": {
            "account_id": {"$from": "call 1", "path": "[0].account_id"},
            "amount": {"$from": "call 1", "path": "[0].balance", "add": 1},
        },
    },
    {"reply": "Done."},
]
