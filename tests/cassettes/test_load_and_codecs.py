"""Loading edge cases (errors name the file) and the per-format codec seam."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from harness.cassettes import (
    CassetteError,
    CassetteModel,
    Codec,
    ParsedRequest,
    codec_for,
    load_cassette,
    register_codec,
)
from harness.formats._codec import _CODECS
from harness.loop import ModelRequest, ModelResponse, run
from harness.messages import AssistantMessage, UserMessage


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("interactions: [\n", "is not valid YAML"),
        ("just text\n", "expected a mapping with an 'interactions' list"),
        ("interactions: [3]\n", "interaction 1 is int, expected a mapping"),
        ("interactions: [{request: {}}]\n", "needs both 'request' and 'response'"),
        ("interactions: [{request: {}, response: {}}]\n", "needs a 'method' and a 'uri'"),
        (
            "interactions: [{request: {method: POST, uri: 'http://x.test/'}, response: {}}]\n",
            "needs 'status: {code: <int>}'",
        ),
    ],
)
def test_bad_files_name_the_file_and_the_problem(tmp_path: Path, text: str, problem: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(CassetteError) as info:
        load_cassette(path)
    assert str(path) in str(info.value) and problem in str(info.value)


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="cannot read cassette"):
        load_cassette(tmp_path / "nope.yaml")


def test_scalar_headers_gzip_and_dict_sources() -> None:
    body = gzip.compress(json.dumps({"ok": True}).encode())
    data: dict[str, Any] = {
        "interactions": [
            {
                "request": {
                    "method": "get",
                    "uri": "http://x.test/a?b=1",
                    "body": None,
                    "headers": {"X-Mixed": "One"},
                },
                "response": {
                    "status": {"code": 200},
                    "headers": {"Content-Encoding": ["gzip"]},
                    "body": {"string": body},
                },
            }
        ]
    }
    cassette = load_cassette(data)
    (only,) = cassette.interactions
    assert (only.method, only.path, only.request.headers["x-mixed"]) == ("GET", "/a", "One")
    assert only.response.json() == {"ok": True}
    assert only.request.json() is None and not only.is_stream
    assert data["interactions"][0]["response"]["body"]["string"] == body  # not mutated


class EchoCodec(Codec):
    """A toy format: ``POST /echo`` with ``{"say": text}``; answers ``{"said": text}``."""

    name = "echo"

    def handles(self, method: str, path: str) -> bool:
        return method == "POST" and path == "/echo"

    def parse_request(self, body: Any) -> ParsedRequest:
        return ParsedRequest(model="echo", messages=(UserMessage(content=body["say"]),), tools=())

    def encode_request(self, request: ModelRequest, *, model: str, stream: bool) -> dict[str, Any]:
        return {"say": request.messages[-1].content}

    def decode_json(self, data: Any) -> ModelResponse:
        return ModelResponse(message=AssistantMessage(content=data["said"]))

    def decode_events(self, events: list[Any]) -> ModelResponse:
        return self.decode_json(events[-1])


def test_a_registered_codec_reaches_the_cassette_model(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "interactions:\n- request: {method: POST, uri: 'http://echo.test/echo',"
        ' body: \'{"say": "hi"}\'}\n'
        "  response: {status: {code: 200}, headers: {content-type: [application/json]},"
        ' body: {string: \'{"said": "hello"}\'}}\n',
    )
    assert codec_for("POST", "/echo") is None
    with pytest.raises(TypeError):
        register_codec(object())  # type: ignore[arg-type]
    register_codec(EchoCodec())
    try:
        assert codec_for("POST", "/echo").name == "echo"  # type: ignore[union-attr]
        result = run(CassetteModel(path), "hi")
        assert result.output == "hello"
    finally:
        _CODECS[:] = [c for c in _CODECS if not isinstance(c, EchoCodec)]
    assert codec_for("POST", "/echo") is None
