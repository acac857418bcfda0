"""The plugin marker replays every real corpus cassette (iterated, never listed) through
the ``harness_openai`` client under the default semantic matcher, and a test whose code
drifts from its cassette fails with the harness's explanation, not ``Connection error``."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cassettes"))
from corpus import SKIP_REASON, corpus_files

from harness.cassettes import codec_for, load_cassette

INNER = """
import json, pathlib
import pytest
from openai import Stream

CASES = json.loads(pathlib.Path(__file__).with_name("cases.json").read_text())


@pytest.mark.parametrize(
    "case", [pytest.param(c, marks=pytest.mark.harness_cassette(c["name"], unused="error"),
                          id=c["name"]) for c in CASES]
)
def test_replay(case, harness_openai):
    for body, suffix, stream, status in case["requests"]:
        if status >= 400:
            with pytest.raises(Exception):
                harness_openai.post(suffix, cast_to=object, body=body)
        elif stream:
            assert list(harness_openai.post(suffix, cast_to=object, body=body, stream=True,
                                            stream_cls=Stream[object]))
        else:
            assert harness_openai.post(suffix, cast_to=object, body=body)


@pytest.mark.harness_cassette(CASES[0]["name"])
def test_drifted(harness_openai):
    body, suffix, stream, status = CASES[0]["requests"][0]
    body = dict(body, model="another-model")
    harness_openai.post(suffix, cast_to=object, body=body)
"""


@pytest.mark.skipif(not corpus_files(), reason=SKIP_REASON)
def test_every_corpus_cassette_replays_through_the_marker(pytester: pytest.Pytester) -> None:
    folder = pytester.path / "cassettes" / "test_corpus"
    folder.mkdir(parents=True)
    cases = []
    for path in corpus_files():
        cassette = load_cassette(path)
        requests = []
        for interaction in cassette.interactions:
            codec = codec_for(interaction.method, interaction.path)
            if codec is None:
                continue
            suffix = "/chat/completions" if codec.name == "openai-chat" else "/responses"
            requests.append(
                [interaction.request.json(), suffix, interaction.is_stream, interaction.status]
            )
        if requests and all(
            i.uri.startswith("https://api.openai.com/v1/") for i in cassette.interactions
        ):
            name = f"{path.parent.name}__{path.stem}"
            shutil.copy(path, folder / f"{name}.yaml")
            cases.append({"name": name, "requests": requests})
    assert len(cases) >= 3
    (pytester.path / "cases.json").write_text(json.dumps(cases))
    pytester.makepyfile(test_corpus=INNER)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning"
    )
    result.assert_outcomes(passed=len(cases), failed=1)
    result.stdout.fnmatch_lines(
        [
            "*CassetteMismatch: cassette *: request 1 (POST /v1/*) does not match the "
            "recording; closest recorded request is interaction 1 of *: "
            "request 1: model differs: recorded *, now 'another-model'*"
        ]
    )
    assert "Connection error" not in "\n".join(
        line for line in result.outlines if line.startswith("E ")
    )
