"""Traces emitted by third-party instrumentations read back as the run they recorded.

``tests/traces/otlp/`` holds OTLP JSON files written by ``make_otlp.py`` (how, and with
which package versions: the folder's README and each ``*.expected.json``). For every file,
``harness trace show --json`` gives the offered tools and the calls of each model request
the run made (what the wire fake saw), the facts a file lacks are named, and a file with
content converts to a scenario that ``harness run`` replays request by request. The live
tests run each source again and compare the import with the wire trace of the same run:
tools offered, calls, arguments, results, injections.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from harness.cli._app import app
from harness.scenarios import load_scenario, run_scenario

FOLDER = Path(__file__).parent / "otlp"
FILES = sorted(FOLDER.glob("*.otlp.jsonl"))
runner = CliRunner()


def _expected(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        path.with_name(path.name.replace(".otlp.jsonl", ".expected.json")).read_text("utf-8")
    )
    return data


def test_the_folder_holds_every_flavour() -> None:
    names = {p.name.split(".")[0] for p in FILES}
    assert {"pydantic-ai", "openai-agents-openinference", "openai-openllmetry-flat"} <= names
    assert len([n for n in names if n.startswith(("openai-", "anthropic-"))]) >= 4


@pytest.mark.parametrize("path", FILES, ids=[p.name.split(".")[0] for p in FILES])
def test_show_json_gives_the_tools_and_calls_of_every_request(path: Path) -> None:
    expected = _expected(path)
    result = runner.invoke(app, ["trace", "show", "--json", str(path)])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    assert shown["format"] == "otlp-json"
    assert len(shown["conversations"]) == 1
    requests = shown["conversations"][0]["requests"]
    assert len(requests) == len(expected["requests"])  # stacked spans count once
    for got, want in zip(requests, expected["requests"], strict=True):
        if expected["content"]:
            assert got["missing"] == []
            assert got["tools"]["visible"] == want["offered"]
            assert got["response"]["calls"] == want["calls"]
        elif got["tools"] is None:  # unknown, not empty: and said so
            assert "tool definitions" in got["missing"]
        else:
            assert got["tools"]["visible"] == want["offered"]
        if not expected["content"] and not got["response"]["calls"] and want["calls"]:
            assert any(m.startswith("output") for m in got["missing"])


CONTENT = [p for p in FILES if _expected(p)["content"]]


@pytest.mark.parametrize("path", CONTENT, ids=[p.name.split(".")[0] for p in CONTENT])
def test_to_scenario_then_run_replays_every_request(path: Path, tmp_path: Path) -> None:
    out = tmp_path / "replay.yaml"
    result = runner.invoke(app, ["trace", "to-scenario", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    outcome = run_scenario(load_scenario(out))
    assert outcome.passed, outcome.problem
    assert outcome.model_requests == len(_expected(path)["requests"])
    calls = [c.name for it in outcome.trace or () for c in it.calls]
    assert calls == [c for r in _expected(path)["requests"] for c in r["calls"]]


NO_CONTENT = [p for p in FILES if not _expected(p)["content"]]


@pytest.mark.parametrize("path", NO_CONTENT, ids=[p.name.split(".")[0] for p in NO_CONTENT])
def test_to_scenario_without_content_says_what_is_missing(path: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["trace", "to-scenario", str(path), "-o", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "cannot be replayed: the trace lacks" in result.output
    assert "content capture" in result.output


def test_a_file_with_several_traces_holds_several_conversations(tmp_path: Path) -> None:
    joined = tmp_path / "two.otlp.jsonl"
    joined.write_text(
        (FOLDER / "openai-genai.otlp.jsonl").read_text("utf-8")
        + (FOLDER / "anthropic-openinference.otlp.jsonl").read_text("utf-8"),
        encoding="utf-8",
    )
    shown = json.loads(runner.invoke(app, ["trace", "show", "--json", str(joined)]).output)
    assert [len(c["requests"]) for c in shown["conversations"]] == [3, 3]
    assert [r["interaction"] for c in shown["conversations"] for r in c["requests"]] == [
        1,
        2,
        3,
        4,
        5,
        6,
    ]
    out = tmp_path / "both.yaml"
    assert runner.invoke(app, ["trace", "to-scenario", str(joined), "-o", str(out)]).exit_code == 0
    data = yaml.safe_load(out.read_text("utf-8"))
    assert [s["name"] for s in data["sessions"]] == ["conversation_1", "conversation_2"]
    assert run_scenario(load_scenario(out)).passed


# -- live: the same run through the instrumentation and through the wire ---------------------

_LIVE = """
import json, sys
sys.path.insert(0, {folder!r})
import traced_agents
from harness.traces import otel_conversations
recorded = traced_agents.record(traced_agents.SOURCES[{name!r}])
(conversation,) = otel_conversations(recorded.spans)
def facts(trace):
    return [
        dict(offered=list(it.offered), injected=list(it.injected),
             calls=[[c.name, c.args, c.content] for c in it.calls])
        for it in trace
    ]
print(json.dumps(dict(imported=facts(conversation.trace()), wire=facts(recorded.wire),
                      missing=conversation.missing())))
"""


def _live(name: str) -> dict[str, Any]:
    code = _LIVE.format(folder=str(Path(__file__).parent), name=name)
    # one process per source: instrumentations patch the SDKs globally
    done = subprocess.run(
        [sys.executable, "-W", "ignore::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


LIVE = ["pydantic-ai", "openai-agents-openinference", "openai-genai", "openai-openinference"]
LIVE += ["anthropic-openllmetry", "pydantic-ai-stacked-openinference"]


@pytest.mark.slow
@pytest.mark.parametrize("name", LIVE)
def test_live_import_is_the_wire_trace_of_the_same_run(name: str) -> None:
    pytest.importorskip("openinference.instrumentation.openai")
    found = _live(name)
    assert found["imported"] == found["wire"]
    assert found["imported"][0]["injected"] == ["get_average_spend"]
    assert found["missing"] == [[], [], []]
