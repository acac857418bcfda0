"""``harness serve``: a scenario's model over HTTP; prints its URL, stops on Ctrl-C."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest
from typer.testing import CliRunner

from harness.cli._app import app
from harness.loop import Model, RunResult, run
from harness.models import ScriptedModel, WireServer
from harness.scenarios import load_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "discovery" / "seed_average_spend.yaml"
SEARCH = {
    "type": "function",
    "function": {
        "name": "search_customer",
        "parameters": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}


def _run(model: Model) -> RunResult:
    """The seed scenario's run on ``model`` (the served tests compare it with in process)."""
    loaded = load_scenario(SCENARIO)
    return run(
        model,
        loaded.build_prompt(),
        tools=loaded.build_tools(),
        strategies=loaded.build_strategies(),
        system=loaded.spec.system,
    )


def _shape(result: RunResult) -> list[tuple[Any, ...]]:
    return [(it.offered, [c.name for c in it.calls], it.injected) for it in result.trace]


def _lines(process: subprocess.Popen[str]) -> queue.Queue[str]:
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


@pytest.mark.slow  # a subprocess, as its Bedrock and Gemini siblings
@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
def test_serve_prints_its_url_serves_and_stops_on_ctrl_c() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", "from harness.cli import main; main()", "serve",
         "--scenario", str(SCENARIO), "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    try:
        lines = _lines(process)
        url = None
        seen = []
        while url is None:
            line = lines.get(timeout=20)
            seen.append(line)
            if line.startswith("OPENAI_BASE_URL="):
                url = line.strip().split("=", 1)[1]
        assert url.startswith("http://127.0.0.1:")
        with openai.OpenAI(base_url=url, api_key="test", max_retries=0, timeout=10) as client:
            completion = client.chat.completions.create(
                model="gpt-test",
                messages=[{"role": "user", "content": "What's John Smith's average spend?"}],
                tools=[SEARCH],  # type: ignore[list-item]
            )
        call = (completion.choices[0].message.tool_calls or [])[0]
        assert call.function.name == "search_customer"  # type: ignore[union-attr]
        assert json.loads(call.function.arguments) == {"name": "John Smith"}  # type: ignore[union-attr]
        process.send_signal(signal.SIGINT)
        try:  # a hang guard, not a timing check
            code = process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            printed = []
            while not lines.empty():
                printed.append(lines.get())
            pytest.fail(f"harness serve still runs 60 s after Ctrl-C; it printed {printed!r}")
        assert code == 0
        rest = []
        while not lines.empty():
            rest.append(lines.get())
        assert "stopped" in "".join(rest)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _block_sigint() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
@pytest.mark.parametrize("started", [_ignore_sigint, _block_sigint], ids=["ignored", "blocked"])
def test_ctrl_c_stops_serve_started_with_sigint_ignored_or_blocked(
    started: Callable[[], None],
) -> None:
    """Both survive exec (a shell's background job, a test runner's worker): serve undoes
    them while it serves, or it would run on after Ctrl-C."""
    process = subprocess.Popen(
        [sys.executable, "-c", "from harness.cli import main; main()", "serve",
         "--scenario", str(SCENARIO), "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=started,
    )  # fmt: skip
    try:
        lines = _lines(process)
        while not lines.get(timeout=20).startswith("press Ctrl-C"):
            pass
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()


def test_serve_command_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(self: WireServer) -> None:
        self.stop()
        raise KeyboardInterrupt

    monkeypatch.setattr(WireServer, "serve_forever", interrupted)
    result = CliRunner().invoke(app, ["serve", "--scenario", str(SCENARIO), "--strict"])
    assert result.exit_code == 0, result.output
    assert "OPENAI_BASE_URL=http://127.0.0.1:" in result.output
    openai_url = result.output.split("OPENAI_BASE_URL=", 1)[1].split()[0]
    assert f"ANTHROPIC_BASE_URL={openai_url.removesuffix('/v1')}\n" in result.output
    assert f"AWS_ENDPOINT_URL_BEDROCK_RUNTIME={openai_url.removesuffix('/v1')}\n" in result.output
    assert f"GOOGLE_GEMINI_BASE_URL={openai_url.removesuffix('/v1')}/\n" in result.output
    assert "stopped" in result.output


def test_serve_reports_a_bad_scenario(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["serve", "--scenario", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2
    assert "error:" in result.output and "missing.yaml" in result.output


def test_serve_reports_a_port_in_use() -> None:
    with WireServer(ScriptedModel([])) as busy:
        result = CliRunner().invoke(
            app, ["serve", "--scenario", str(SCENARIO), "--port", str(busy.port)]
        )
    assert result.exit_code == 2
    assert "error:" in result.output


def test_serve_passes_its_limits_to_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, int] = {}

    def interrupted(self: WireServer) -> None:
        seen.update(body=self.max_body_bytes, connections=self.max_connections)
        self.stop()
        raise KeyboardInterrupt

    monkeypatch.setattr(WireServer, "serve_forever", interrupted)
    args = ["serve", "-s", str(SCENARIO), "--max-body-bytes", "1000", "--max-connections", "3"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert seen == {"body": 1000, "connections": 3}
    bad = CliRunner().invoke(app, ["serve", "-s", str(SCENARIO), "--max-connections", "0"])
    assert bad.exit_code == 2 and "max_connections must be an int >= 1" in bad.output
