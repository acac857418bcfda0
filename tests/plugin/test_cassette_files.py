"""Cassette files a hostile or careless user hands the harness (issue 9 section 5):
malformed and truncated files, empty or junk files in record mode ``once``, and two
writers (pytest-xdist workers) sharing one cassette."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from harness._errors import CassetteError
from harness.testing import open_cassette
from harness.testing._cassette import check_cassette_data

GOOD = {
    "interactions": [
        {
            "request": {"method": "GET", "uri": "http://127.0.0.1/x", "body": None, "headers": {}},
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": {},
                "body": {"string": "ok"},
            },
        }
    ],
    "version": 1,
}


def _bad(path: Path, mutate: Any) -> Path:
    data = yaml.safe_load(yaml.safe_dump(GOOD))
    mutate(data)
    path.write_text(yaml.safe_dump(data))
    return path


SHAPES = {
    "no request": lambda d: d["interactions"][0].pop("request"),
    "no uri": lambda d: d["interactions"][0]["request"].pop("uri"),
    "no request body": lambda d: d["interactions"][0]["request"].pop("body"),
    "no response body": lambda d: d["interactions"][0]["response"].pop("body"),
    "body not a mapping": lambda d: d["interactions"][0]["response"].update(body="ok"),
    "no status code": lambda d: d["interactions"][0]["response"].update(status={}),
    "headers a list": lambda d: d["interactions"][0]["response"].update(headers=[1]),
    "request headers a list": lambda d: d["interactions"][0]["request"].update(headers=[1]),
    "interaction a string": lambda d: d["interactions"].append("junk"),
    "no response": lambda d: d["interactions"][0].pop("response"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("mode", ["none", "once", "new_episodes"])
def test_wrong_shapes_name_the_file_and_interaction(tmp_path: Path, shape: str, mode: str) -> None:
    path = _bad(tmp_path / "c.yaml", SHAPES[shape])
    with pytest.raises(CassetteError) as info, open_cassette(path, record_mode=mode):
        pass
    message = str(info.value)
    assert str(path) in message and "interaction" in message
    assert info.value.path == str(path)
    assert info.value.index in (0, 1)


@pytest.mark.parametrize(
    "text",
    [
        "interactions:\n- request:\n    method: GET\n    uri: 'http://127.0.0.1/x",  # truncated
        "[1, 2, 3]\n",  # a list
        "just some words\n",  # junk
        "interactions: 5\n",
    ],
)
@pytest.mark.parametrize("mode", ["none", "once", "new_episodes"])
def test_malformed_or_junk_files_are_refused(tmp_path: Path, text: str, mode: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with (
        pytest.raises(CassetteError, match="not a usable vcrpy cassette"),
        open_cassette(path, record_mode=mode),
    ):
        pass
    assert path.read_text() == text  # nothing re-recorded over it


@pytest.mark.parametrize("text", ["", "   \n\n"])
@pytest.mark.parametrize("mode", ["none", "once", "new_episodes"])
def test_empty_files_are_refused_not_silently_re_recorded(
    tmp_path: Path, text: str, mode: str
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(CassetteError, match="is empty"), open_cassette(path, record_mode=mode):
        pass


def test_mode_all_records_over_an_empty_or_junk_file(tmp_path: Path, server: str) -> None:
    for text in ("", "junk: [", "[1]"):
        path = tmp_path / "c.yaml"
        path.write_text(text)
        with open_cassette(path, record_mode="all"), httpx2.Client() as http:
            http.get(f"{server}/a")
        assert len(yaml.safe_load(path.read_text())["interactions"]) == 1


def test_undecodable_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(CassetteError, match="UTF-8"), open_cassette(path, record_mode="once"):
        pass


def test_the_parsed_body_variant_passes_the_shape_check(tmp_path: Path) -> None:
    data = yaml.safe_load(yaml.safe_dump(GOOD))
    request = data["interactions"][0]["request"]
    request["parsed_body"] = {"model": "m"}
    del request["body"]
    assert len(check_cassette_data(tmp_path / "c.yaml", data)) == 1


# -- shared cassettes ----------------------------------------------------------------------------


class _Ok(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        body = self.path.encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("mode", ["new_episodes", "all"])
def test_two_writers_sharing_a_cassette_keep_every_interaction(
    tmp_path: Path, server: str, mode: str
) -> None:
    """Two workers open the same cassette, record one request each and save in turn: the
    second save merges what the first wrote since it loaded the file."""
    path = tmp_path / "shared.yaml"
    with open_cassette(path, record_mode="once"), httpx2.Client() as http:
        http.get(f"{server}/base")
    first = open_cassette(path, record_mode=mode)
    second = open_cassette(path, record_mode=mode)
    with httpx2.Client() as http:
        first.__enter__()
        http.get(f"{server}/from-first")
        second_cassette = second.__enter__()
        # the second worker's request is recorded by the innermost (its own) cassette
        http.get(f"{server}/from-second")
        second.__exit__(None, None, None)
        first.__exit__(None, None, None)
    assert second_cassette is not None
    uris = [i["request"]["uri"] for i in yaml.safe_load(path.read_text())["interactions"]]
    assert any(u.endswith("/from-first") for u in uris)
    assert any(u.endswith("/from-second") for u in uris)
    assert sum(u.endswith("/base") for u in uris) == 1  # kept by vcrpy, not duplicated


def test_many_threads_appending_to_one_cassette_lose_nothing(tmp_path: Path, server: str) -> None:
    from vcr.request import Request  # type: ignore[import-untyped]
    from vcr.serializers import yamlserializer  # type: ignore[import-untyped]

    from harness.testing._cassette import _persister
    from harness.testing._scrub import CassetteScrubber

    path = tmp_path / "many.yaml"

    def write(n: int) -> None:
        persister = _persister(path, CassetteScrubber.build(environ={}), [])
        request = Request("GET", f"{server}/{n}", None, {})
        response = {
            "status": {"code": 200, "message": "OK"},
            "headers": {},
            "body": {"string": str(n)},
        }
        persister.save_cassette(
            path, {"requests": [request], "responses": [response]}, yamlserializer
        )

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    uris = sorted(i["request"]["uri"] for i in yaml.safe_load(path.read_text())["interactions"])
    assert uris == sorted(f"{server}/{n}" for n in range(8))
