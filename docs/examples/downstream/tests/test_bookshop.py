"""Tests of the bookshop agent, written only with the public API and the harness plugin."""

from __future__ import annotations

from pathlib import Path

import bookshop_agent
import pytest

from harness import EntityDiscovery, Model, call, calls, reply
from harness.assertions import (
    call_to,
    called_in_order,
    expect,
    expect_timeline,
    has_iterations,
    injected,
    never_called,
    offered,
)

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def test_price_question_unfolds_the_book_tools(harness_runner, harness_scripted) -> None:
    model = harness_scripted(
        [
            call("find_books", {"title": "Dune"}),
            call("book_b1_get_price"),
            reply("Dune costs 9.99 euros."),
        ]
    )
    result = harness_runner.record(bookshop_agent.ask(model, "How much is Dune?"))
    assert result.output == "Dune costs 9.99 euros."
    assert expect_timeline(
        result,
        [
            "call find_books",
            "injected book_b1_get_price, book_b2_get_price",
            "offered gains book_*_get_price",
            "call book_b1_get_price",
            "answer 9.99",
        ],
    )
    assert result.trace == injected("book_*", at=1, after_call="find_books")
    assert result.trace == called_in_order(call_to("find_books", title="Dune"), "book_b1_*")


def test_stock_check_in_parallel(harness_runner, harness_scripted) -> None:
    model = harness_scripted(
        [
            call("find_books", {"title": "dune"}),
            calls(call("book_b1_get_stock"), call("book_b2_get_stock")),
            reply("Only Dune is in stock."),
        ]
    )
    result = harness_runner.run(
        model,
        "Which Dune books are in stock?",
        tools=[bookshop_agent.find_books],
        strategies=[EntityDiscovery()],
    )
    assert expect(
        result,
        has_iterations(3),
        offered(at=1, exactly=["find_books"]),
        offered(at=2, includes=["book_b1_get_stock", "book_b2_get_stock"]),
        never_called("book_*_get_price"),
    )


def test_timeline_snapshot(harness_runner, harness_scripted, harness_snapshot) -> None:
    model = harness_scripted([call("find_books", {"title": "Emma"}), reply("Emma is there.")])
    result = harness_runner.record(bookshop_agent.ask(model, "Do you have Emma?"))
    harness_snapshot(
        result,
        """
        #1 offered=1 calls=find_books +book_b3_get_price,book_b3_get_stock
        #2 offered=3 answer='Emma is there.'
        """,
    )


@pytest.fixture
def harness_model(harness_scripted) -> Model:
    """The model behind the fake OpenAI endpoint of harness_openai."""
    return harness_scripted(
        [call("find_books", {"title": "Emma"}), call("book_b3_get_stock"), reply("12 in stock.")]
    )


def test_through_the_openai_sdk(harness_openai, harness_runner) -> None:
    result = harness_runner.record(
        bookshop_agent.ask_with_openai(harness_openai, "Is Emma in stock?")
    )
    assert result.output == "12 in stock."
    assert result.trace == called_in_order("find_books", "book_b3_get_stock")


@pytest.mark.harness_cassette
def test_replayed_from_a_cassette(harness_openai) -> None:
    result = bookshop_agent.ask_with_openai(harness_openai, "How much is Dune?")
    assert result.output == "Dune costs 9.99 euros."
    assert result.trace == injected("book_b1_get_price")


@pytest.mark.harness_scenario(str(SCENARIOS / "price_of_dune.yaml"))
def test_scenario_with_extra_checks(harness_scenario) -> None:
    assert harness_scenario.trace == never_called("book_*_get_stock")
