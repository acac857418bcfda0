"""An event-booking agent. Planted bug: the capacity check reads the seats left as "no
limit" once they reach zero (``if left and seats > left``), so after bookings that fill
an event exactly, the next booking overbooks it (list, bookings of 10 + 10 + 3 seats
landing on the capacity, one more: 5 calls, a sum walked to a limit)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from pydantic import Field

from harness import RunResult, llm_tool


class Event:
    def __init__(self, title: str, capacity: int, booked: int) -> None:
        self.event_id = f"ev-{uuid.uuid4().hex[:6]}"
        self.title = title
        self.capacity = capacity
        self.booked = booked


class Venue:
    def __init__(self) -> None:
        events = [Event("Jazz night", 120, 97), Event("Poetry slam", 40, 12)]
        self.events = {e.event_id: e for e in events}
        self.bookings: list[tuple[str, int]] = []


def make() -> dict[str, Any]:
    venue = Venue()

    @llm_tool
    def list_events() -> list[dict[str, Any]]:
        """Upcoming events with their capacity and the seats booked so far."""
        return [
            {"event_id": e.event_id, "title": e.title, "capacity": e.capacity, "booked": e.booked}
            for e in venue.events.values()
        ]

    @llm_tool
    def book(
        event_id: Annotated[str, "An event id"],
        seats: Annotated[int, Field(ge=1, le=10, description="1 to 10 seats")],
    ) -> dict[str, Any]:
        """Book seats at an event (never more than it holds)."""
        event = venue.events.get(event_id)
        if event is None:
            raise KeyError(f"no event {event_id!r}")
        left = event.capacity - event.booked
        if left and seats > left:  # BUG: zero seats left reads as "no limit"
            raise ValueError(f"only {left} seats left")
        event.booked += seats
        venue.bookings.append((event_id, seats))
        return {"event_id": event_id, "booked": event.booked, "capacity": event.capacity}

    return {
        "prompt": "Get our group into the jazz night.",
        "tools": [list_events, book],
        "state": {"venue": venue},
    }


def never_overbooked(run: RunResult) -> None:
    venue: Venue = run.state["venue"]
    over = {
        e.title: f"{e.booked}/{e.capacity}" for e in venue.events.values() if e.booked > e.capacity
    }
    assert not over, f"events overbooked: {over}"


def _book(seats: int) -> dict[str, Any]:
    return {
        "call": "book",
        "args": {"event_id": {"$from": "call 1", "path": "[0].event_id"}, "seats": seats},
    }


KNOWN_BAD = [{"call": "list_events"}, _book(10), _book(10), _book(3), _book(1), {"reply": "Done."}]
