"""``harness serve`` answers google-genai: the seed scenario runs through ``GeminiModel``
against the served scenario, plain and streamed, with the trace it has in process; the
client finds the server through the variable the command prints."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from google import genai
from google.genai import types
from test_serve import SCENARIO, _lines, _run, _shape

from harness.models import GeminiModel
from harness.scenarios import load_scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
def test_google_genai_runs_the_seed_scenario_against_harness_serve(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    baseline = _run(load_scenario(SCENARIO).build_model())
    process = subprocess.Popen(
        [sys.executable, "-c", "from harness.cli import main; main()", "serve",
         "--scenario", str(SCENARIO), "--port", "0", "--repeat"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    try:
        lines = _lines(process)
        base_url = None
        while base_url is None:
            line = lines.get(timeout=20)
            if line.startswith("GOOGLE_GEMINI_BASE_URL="):
                base_url = line.strip().split("=", 1)[1]
        assert base_url.startswith("http://127.0.0.1:")
        # what a user's shell does with the printed line: google-genai reads the variable
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", base_url)
        for variable in ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"):
            monkeypatch.delenv(variable, raising=False)
        client = genai.Client(
            api_key="AIza" + "k" * 35,
            http_options=types.HttpOptions(retry_options=types.HttpRetryOptions(attempts=1)),
        )
        for stream in (False, True):
            result = _run(GeminiModel(client, "gemini-2.5-flash", stream=stream))
            assert _shape(result) == _shape(baseline)
            assert result.output == baseline.output
        client.close()
        process.send_signal(signal.SIGINT)
        # a hang guard, not a timing check: under coverage (subprocesses measured too) on a
        # loaded machine, exiting includes writing the coverage data
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()
