"""Project-wide recording settings, written as a pytest-recording suite writes them, and
the model the loopback server plays while a cassette records."""

from __future__ import annotations

import pytest

from harness import Model, call, reply


@pytest.fixture
def vcr_config() -> dict[str, object]:
    # the harness reads pytest-recording's fixture: cassettes next to the tests,
    # a custom header scrubbed (credential headers always are)
    return {
        "cassette_library_dir": "tests/cassettes",
        "filter_headers": ["x-team"],
        "match_on": ["method", "path"],
    }


@pytest.fixture
def harness_model(harness_scripted) -> Model:
    """What the harness_server fixture (a loopback OpenAI-compatible server) answers while
    `pytest --record-mode=once` records; a replay never reaches it."""
    return harness_scripted([call("forecast", {"city": "Oslo"}), reply("Yes: snow, -3 C.")])
