"""``harness cassette show|to-scenario|check``, ``harness record``, ``harness serve --repeat``."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest
from typer.testing import CliRunner

from harness.cli._app import app
from harness.cli._serve import Repeating
from harness.models import ScriptedModel, WireServer, call, reply
from harness.scenarios import load_scenario

ROOT = Path(__file__).resolve().parents[2]
RECORDED = sorted((ROOT / "cassettes" / "recorded").glob("*.yaml"))
runner = CliRunner()


@pytest.mark.parametrize("path", RECORDED, ids=[p.name for p in RECORDED])
def test_show_prints_the_injection_timeline(path: Path) -> None:
    result = runner.invoke(app, ["cassette", "show", str(path)])
    assert result.exit_code == 0, result.output
    assert "request 1 (interaction 1, POST /v1/chat/completions" in result.output
    assert "injected:" in result.output
    assert "  call " in result.output


@pytest.mark.parametrize("path", RECORDED, ids=[p.name for p in RECORDED])
def test_to_scenario_writes_a_file_harness_run_passes(path: Path, tmp_path: Path) -> None:
    target = tmp_path / "scenarios" / f"{path.stem}.yaml"
    result = runner.invoke(app, ["cassette", "to-scenario", str(path), "-o", str(target)])
    assert result.exit_code == 0, result.output
    spec = load_scenario(target).spec
    assert spec.expect.timeline or (spec.turns and spec.turns[0].expect.timeline)
    ran = runner.invoke(app, ["run", str(target)])
    assert ran.exit_code == 0, ran.output
    assert "1 passed, 0 failed" in ran.output


def test_check_passes_the_project_recordings_and_names_problems(tmp_path: Path) -> None:
    ok = runner.invoke(app, ["cassette", "check", *map(str, RECORDED)])
    assert ok.exit_code == 0, ok.output
    leaky = tmp_path / "leaky.yaml"
    leaky.write_text(
        (RECORDED[0].read_text()).replace(
            "    headers:\n",
            "    headers:\n      Authorization:\n      - Bearer sk-proj-abcdefghijklmnopqrstuvwx\n",
            1,
        )
    )
    broken = tmp_path / "broken.yaml"
    broken.write_text("interactions: [unclosed\n")
    bad = runner.invoke(app, ["cassette", "check", str(leaky), str(broken)])
    assert bad.exit_code == 2
    assert (
        f"{leaky}: interaction 1: request header 'authorization' holds a credential" in bad.output
    )
    assert f"{broken}: cassette" in bad.output and "not valid YAML" in bad.output
    assert "expected ',' or ']'" in bad.output  # brackets survive: no markup


def test_errors_name_the_file_and_exit_2(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    for command in (
        ["cassette", "show", str(missing)],
        ["cassette", "to-scenario", str(missing), "-o", str(tmp_path / "x.yaml")],
    ):
        result = runner.invoke(app, command)
        assert result.exit_code == 2
        assert str(missing) in result.output
    result = runner.invoke(
        app,
        ["cassette", "to-scenario", str(RECORDED[0]), "-o", str(tmp_path / "x.yaml"), "-c", "5"],
    )
    assert result.exit_code == 2 and "conversation 5 does not exist" in result.output


def test_record_writes_a_cassette_from_a_real_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Against the wire fake on loopback, standing in for a real OpenAI-compatible server."""
    served = ScriptedModel(
        [
            call("search_customer", name="John Smith"),
            call("customer_*_get_average_spend"),
            reply("42"),
        ]
    )
    target = tmp_path / "rec.yaml"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-record-secret-value")
    with WireServer(served) as server:
        result = runner.invoke(
            app,
            [
                "record",
                "--scenario",
                str(ROOT / "scenarios/discovery/seed_average_spend.yaml"),
                "--base-url",
                server.url,
                "--model",
                "tiny",
                "--stream",
                "--string-content",
                "--tool-choice",
                "search_customer,customer_*_get_average_spend,none",
                "-o",
                str(target),
            ],
        )
        bodies = [r.body for r in server.requests]
    assert result.exit_code == 0, result.output
    assert "3 request(s)" in result.output
    assert [b["tool_choice"] for b in bodies] == [
        {"type": "function", "function": {"name": "search_customer"}},
        {"type": "function", "function": {"name": "customer_c123_get_average_spend"}},
        "none",
    ]
    assert bodies[1]["messages"][2]["content"] == ""  # --string-content
    text = target.read_text()
    assert "sk-record-secret-value" not in text
    shown = runner.invoke(app, ["cassette", "show", str(target)])
    assert (
        "streamed" in shown.output and "injected: customer_c123_get_average_spend" in shown.output
    )


def test_record_needs_a_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = runner.invoke(
        app,
        [
            "record",
            "--scenario",
            str(ROOT / "scenarios/discovery/seed_average_spend.yaml"),
            "-m",
            "x",
        ],
    )
    assert result.exit_code == 2 and "--base-url" in result.output


def test_serve_repeat_starts_the_script_again_for_each_conversation() -> None:
    model = Repeating(lambda: ScriptedModel([reply("hello")]))
    with (
        WireServer(model) as server,
        openai.OpenAI(base_url=server.url, api_key="k", max_retries=0) as client,
    ):
        for _ in range(3):
            answer = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}]
            )
            assert answer.choices[0].message.content == "hello"
    assert model.conversations == 3
