"""``harness serve`` answers boto3: the seed scenario runs through ``BedrockConverseModel``
against the served scenario, plain and streamed, with the trace it has in process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import boto3
import botocore.config
import pytest
from test_serve import SCENARIO, _lines, _run, _shape

from harness.models import BedrockConverseModel
from harness.scenarios import load_scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
def test_boto3_runs_the_seed_scenario_against_harness_serve(
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
        endpoint = None
        while endpoint is None:
            line = lines.get(timeout=20)
            if line.startswith("AWS_ENDPOINT_URL_BEDROCK_RUNTIME="):
                endpoint = line.strip().split("=", 1)[1]
        assert endpoint.startswith("http://127.0.0.1:")
        # what a user's shell does with the printed line: boto3 reads the variable
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", endpoint)
        monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
        client = boto3.client(
            "bedrock-runtime",
            region_name="us-west-2",
            aws_access_key_id="AKIAANYCREDENTIAL000",
            aws_secret_access_key="any-secret-will-do-0123456789",
            config=botocore.config.Config(retries={"total_max_attempts": 1}),
        )
        for stream in (False, True):
            result = _run(BedrockConverseModel(client, "us.amazon.nova-pro-v1:0", stream=stream))
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
