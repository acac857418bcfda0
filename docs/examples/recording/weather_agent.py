"""The code under test: an agent that returns text, not a harness result.

It builds its model from the ``openai`` client it is given; in production that client
comes from ``openai.OpenAI()`` (so ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``), in the
tests from the ``harness_openai`` fixture, which honours the same variables.
"""

from __future__ import annotations

import openai

from harness import llm_tool, run
from harness.models import OpenAIChatModel


@llm_tool
def forecast(city: str) -> str:
    """Tomorrow's forecast for a city."""
    return {"Oslo": "snow, -3 C"}.get(city, "unknown")


class WeatherAgent:
    def __init__(self, client: openai.OpenAI) -> None:
        self.model = OpenAIChatModel(client, "gpt-4o-mini")

    def answer(self, question: str) -> str:
        return str(run(self.model, question, tools=[forecast]).output)
