"""The streaming benchmark runs and checks every answer it times (no timing assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from harness.loop import ModelRequest, ModelResponse

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "streaming.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("streaming_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_quick_run_reports_every_case(capsys: pytest.CaptureFixture[str]) -> None:
    results = _load().main(["--quick"])
    out = capsys.readouterr().out
    assert "10 kB argument" in out and "20 requests" in out and "20 parallel calls" in out
    for label in ("10 kB argument", "20 requests", "20 parallel calls"):
        for api in ("chat", "responses"):
            assert results[f"{label} {api}"] > 0
            assert results[f"{label} {api} plain"] > 0


@pytest.mark.parametrize("stream", [False, True])
def test_a_truncated_answer_makes_the_benchmark_fail(
    stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _load()
    real = module.Answer.request

    def truncated(self: object, request: ModelRequest) -> ModelResponse:
        response: ModelResponse = real(self, request)
        call = response.message.tool_calls[0]
        shorter = call.model_copy(update={"arguments": call.arguments[:-1]})
        message = response.message.model_copy(update={"tool_calls": (shorter,)})
        return ModelResponse(message=message, finish_reason="tool_calls")

    assert module.timed("chat", stream, '{"a": 1}', 2) > 0
    monkeypatch.setattr(module.Answer, "request", truncated)
    with pytest.raises(RuntimeError, match="did not arrive intact"):
        module.timed("chat", stream, '{"a": 1}', 2)
