"""A seat-booking agent. The seat map is refreshed by a strategy before each turn, and
booking checks that map. Planted bug: the map is not updated by a booking, so two
bookings of one seat in the same turn both go through (list, then book + book in one
turn: 3 calls, 2 tool turns)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from harness import RunResult, llm_tool
from harness.loop import InjectionContext, InjectionStrategy


class Flight:
    def __init__(self) -> None:
        self.seats = {
            f"{row}{letter}-{uuid.uuid4().hex[:4]}": None for row in (1, 2) for letter in "AB"
        }
        self.snapshot: dict[str, str | None] = {}
        self.bookings: list[tuple[str, str]] = []

    def refresh(self) -> None:
        self.snapshot = dict(self.seats)


class RefreshSeatMap(InjectionStrategy):
    """Refreshes the flight's seat map before every model turn (changes no tools)."""

    def __init__(self, flight: Flight) -> None:
        self.flight = flight

    def before_turn(self, context: InjectionContext) -> None:
        self.flight.refresh()


def make() -> dict[str, Any]:
    flight = Flight()

    @llm_tool
    def list_seats() -> list[dict[str, Any]]:
        """Every seat and whether it is free."""
        return [{"seat": s, "free": who is None} for s, who in flight.seats.items()]

    @llm_tool
    def book_seat(seat: Annotated[str, "A seat from list_seats"], passenger: str = "guest") -> str:
        """Book a free seat for a passenger."""
        if seat not in flight.seats:
            raise KeyError(f"no seat {seat!r}")
        if flight.snapshot.get(seat) is not None:  # BUG: a stale map within a turn
            raise ValueError(f"seat {seat} is taken")
        flight.seats[seat] = passenger
        flight.bookings.append((seat, passenger))
        return f"booked {seat}"

    return {
        "prompt": "Book two seats for me and my partner.",
        "tools": [list_seats, book_seat],
        "strategies": [RefreshSeatMap(flight)],
        "state": {"flight": flight},
    }


def no_double_booking(run: RunResult) -> None:
    flight: Flight = run.state["flight"]
    seats = [seat for seat, _ in flight.bookings]
    double = sorted({s for s in seats if seats.count(s) > 1})
    assert not double, f"seats booked twice: {double}"


KNOWN_BAD = [
    {"call": "list_seats"},
    {
        "calls": [
            {"call": "book_seat", "args": {"seat": {"$from": "call 1", "path": "[0].seat"}}},
            {"call": "book_seat", "args": {"seat": {"$from": "call 1", "path": "[0].seat"}}},
        ]
    },
    {"reply": "Done."},
]
