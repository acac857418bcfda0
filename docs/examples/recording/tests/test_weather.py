"""Record once (``pytest --record-mode=once``) through ``harness_server``, a loopback
OpenAI-compatible server playing the ``harness_model`` script of conftest.py, then
replay offline (``pytest``)."""

from __future__ import annotations

import pytest
from inline_snapshot import snapshot
from weather_agent import WeatherAgent

from harness import capture_run
from harness.testing import snapshot_text


@pytest.mark.vcr
@pytest.mark.usefixtures("harness_server")  # records through it; replays without it
def test_the_agent_checks_the_forecast(harness_openai):
    with capture_run() as captured:
        text = WeatherAgent(harness_openai).answer("Will it snow in Oslo tomorrow?")
    assert text == "Yes: snow, -3 C."
    assert snapshot_text(captured.last) == snapshot("""\
#1 offered=1 calls=forecast
#2 offered=1 answer='Yes: snow, -3 C.'\
""")
