"""A tiny agent under test: a bookshop assistant whose books expose their own tools.

``find_books`` returns ``Book`` objects; entity discovery turns each book's methods
into tools (``book_b1_get_price``, ...), offered from the next model request on.
"""

from __future__ import annotations

from dataclasses import dataclass

import openai

from harness import EntityDiscovery, Model, RunResult, llm_tool, run, tool_provider
from harness.models import OpenAIChatModel

SYSTEM = "You are a bookshop assistant. Find books first, then use their tools."


@tool_provider(prefix="book")
@dataclass
class Book:
    """A book in the catalog."""

    id: str
    title: str
    price: float
    stock: int

    @llm_tool
    def get_price(self) -> float:
        """The book's price in euros."""
        return self.price

    @llm_tool
    def get_stock(self) -> int:
        """How many copies are in stock."""
        return self.stock


CATALOG = [
    Book(id="b1", title="Dune", price=9.99, stock=3),
    Book(id="b2", title="Dune Messiah", price=8.5, stock=0),
    Book(id="b3", title="Emma", price=6.0, stock=12),
]


@llm_tool
def find_books(title: str) -> list[Book]:
    """Books whose title contains the text."""
    return [b for b in CATALOG if title.lower() in b.title.lower()]


def ask(model: Model, question: str) -> RunResult:
    """Answer a question with the bookshop tools."""
    return run(model, question, system=SYSTEM, tools=[find_books], strategies=[EntityDiscovery()])


def ask_with_openai(client: openai.OpenAI, question: str) -> RunResult:
    """The same agent, talking to an OpenAI-compatible API through the official SDK."""
    return ask(OpenAIChatModel(client, "gpt-4o-mini"), question)
