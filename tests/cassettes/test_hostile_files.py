"""Hostile cassette files (issue 27, section 6): ``harness cassette show|check|to-scenario``
fail fast with exit 2 and a message naming the file (and the interaction), within bounded
time and memory; recorded terminal escapes are shown, not obeyed; and whatever the bytes,
the loader raises nothing but a ``CassetteError``."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hostile
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

import harness
from harness.cassettes import _load, load_cassette
from harness.cassettes._show import check_cassette, show_cassette
from harness.cli._app import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

COMMANDS = ["show", "check", "to-scenario"]

# each small enough to run in process before the fix too (it only took long or crashed)
HOSTILE: dict[str, tuple[Callable[[], bytes], str]] = {
    "alias bomb in a header list": (
        lambda: hostile.alias_bomb_in_headers(levels=6).encode(),
        "alias bomb",
    ),
    "alias bomb in a parsed_body": (
        lambda: hostile.alias_bomb_in_parsed_body(levels=6).encode(),
        "alias bomb",
    ),
    "gzip bomb": (lambda: hostile.gzip_bomb_cassette(16 << 20).encode(), "gzip bomb"),
    "not UTF-8": (
        lambda: hostile.plain().encode().replace(b"hello", b"h\xe9llo"),
        "cannot be read as UTF-8",
    ),
    "request JSON nested 100k deep": (
        lambda: hostile.deeply_nested_request().encode(),
        "interaction 1 request body: the JSON nests deeper than",
    ),
    "Anthropic content 5": (
        lambda: hostile.anthropic_content_not_a_list().encode(),
        "interaction 1 is not a anthropic-messages request",
    ),
}


def _invoke(command: str, path: Path, tmp_path: Path) -> Any:
    extra = ["-o", str(tmp_path / "out.yaml")] if command == "to-scenario" else []
    return runner.invoke(app, ["cassette", command, str(path), *extra])


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_file_is_exit_2_naming_the_file_and_the_problem(
    case: str, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_load, "MAX_BODY_BYTES", 1 << 20)  # the 16 MiB bomb stays small
    build, problem = HOSTILE[case]
    path = tmp_path / "hostile.yaml"
    path.write_bytes(build())
    result = _invoke(command, path, tmp_path)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert str(path) in text and problem in text
    assert not (tmp_path / "out.yaml").exists()


def _limited() -> None:  # pragma: no cover - runs in the child process
    import resource

    limit = 1 << 30  # a bomb must not need more than a gibibyte of address space
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS bounds the child on Linux")
@pytest.mark.parametrize(
    "build",
    [hostile.alias_bomb_in_headers, hostile.alias_bomb_in_parsed_body],
    ids=["headers", "parsed_body"],
)
def test_a_1kb_alias_bomb_is_refused_within_a_gibibyte_and_a_minute(
    build: Callable[[], str], tmp_path: Path
) -> None:
    """The real bomb (10**9 strings once expanded): 40 s and a MemoryError before."""
    path = tmp_path / "bomb.yaml"
    path.write_text(hostile.check_yaml_is_small(build()))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from harness.cli import main; main()",
            "cassette",
            "check",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        preexec_fn=_limited,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "alias bomb" in done.stdout and "Traceback" not in done.stderr


def test_the_real_limits_refuse_a_gzip_bomb_while_it_inflates() -> None:
    """The bound is applied during decompression: never more than the limit in memory."""
    bomb = hostile.gzip_bomb(_load.MAX_BODY_BYTES + (1 << 20))
    assert len(bomb) < _load.MAX_BODY_BYTES // 100
    with pytest.raises(harness.CassetteError, match="gzip bomb") as info:
        load_cassette(
            {
                "interactions": [
                    {
                        "request": {"method": "POST", "uri": hostile.CHAT_URI, "body": "{}"},
                        "response": {
                            "status": {"code": 200},
                            "headers": {"content-encoding": ["gzip"]},
                            "body": {"string": bomb},
                        },
                    }
                ]
            }
        )
    assert info.value.index == 0


def test_a_body_at_the_limit_still_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_load, "MAX_BODY_BYTES", 1 << 20)
    exact = hostile.gzip_bomb(1 << 20)
    data = {
        "interactions": [
            {
                "request": {"method": "POST", "uri": hostile.CHAT_URI, "body": "{}"},
                "response": {"status": {"code": 200}, "headers": {}, "body": {"string": exact}},
            }
        ]
    }
    assert load_cassette(data).interactions[0].response.body == bytes(1 << 20)


def test_aliases_that_do_not_explode_still_load(tmp_path: Path) -> None:
    """vcrpy writes an alias for an object it saw twice: that is no bomb."""
    text = hostile.plain().replace("headers: {}", "headers: &h {x-a: [b]}", 1)
    text = text.replace("headers: {content-type: [application/json]}", "headers: *h")
    path = tmp_path / "aliased.yaml"
    path.write_text(text)
    (only,) = load_cassette(path).interactions
    assert only.request.headers == only.response.headers == {"x-a": "b"}


def test_a_self_referencing_alias_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("a: &a [*a]\n" + hostile.plain())
    with pytest.raises(harness.CassetteError, match="refers to a node that contains it"):
        load_cassette(path)


def test_yaml_nested_past_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    depth = _load.MAX_DEPTH + 5
    path.write_text("deep: " + "[" * depth + "]" * depth + "\n" + hostile.plain())
    with pytest.raises(harness.CassetteError, match="nests deeper than"):
        load_cassette(path)


def test_a_file_past_the_size_limit_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_load, "MAX_FILE_BYTES", 1024)
    path = tmp_path / "big.yaml"
    path.write_text(hostile.plain() + "#" * 2048 + "\n")
    with pytest.raises(harness.CassetteError, match="larger than 1024 bytes"):
        load_cassette(path)


def test_to_scenario_into_a_folder_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(hostile.plain())
    folder = tmp_path / "scenarios"
    folder.mkdir()
    result = runner.invoke(app, ["cassette", "to-scenario", str(path), "-o", str(folder)])
    assert result.exit_code == 2, result.output
    assert f"--output '{folder}' is a folder" in result.output
    assert str(folder / "c.yaml") in result.output  # the fix: name a file in it


def test_show_escapes_terminal_sequences(tmp_path: Path) -> None:
    path = tmp_path / "escapes.yaml"
    path.write_text(hostile.terminal_escapes())
    result = runner.invoke(app, ["cassette", "show", str(path)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\u202e" not in result.output
    assert "answer: hello\\x1b]0;pwned\\x07\\x1b[2Jworld\\u202e" in result.output
    assert all("\x1b" not in line for line in show_cassette(path))


def test_printable_escapes_controls_and_bidi_and_keeps_the_rest() -> None:
    from harness.cassettes._show import printable

    assert printable("plain text, tabs\tand ünïcode ✓") == "plain text, tabs\tand ünïcode ✓"
    assert printable("a\nb\rc\x00d\x9be\u2066f") == "a\\nb\\rc\\x00d\\x9be\\u2066f"


def test_every_cassette_error_is_a_harness_cassette_error(tmp_path: Path) -> None:
    """``except harness.CassetteError`` catches what ``load_cassette`` raises on a corrupt
    file (once another class) and every other cassette error."""
    from harness import cassettes, testing

    assert cassettes.CassetteError is harness.CassetteError is testing.CassetteError
    for name in ("CassetteMismatch", "CassetteExhausted", "CassetteUnused"):
        assert issubclass(getattr(cassettes, name), harness.CassetteError)
    from harness.cassettes import CassetteModel, scenario_data, trace_from_cassette
    from harness.testing import open_cassette

    path = tmp_path / "corrupt.yaml"
    path.write_text("interactions: [unclosed\n")
    no_llm = tmp_path / "no_llm.yaml"
    no_llm.write_text(hostile.plain().replace("/v1/chat/completions", "/health"))
    nested = tmp_path / "nested.yaml"
    nested.write_text(hostile.deeply_nested_request())

    def replay_a_missing_file() -> None:
        with open_cassette(tmp_path / "missing.yaml", record_mode="none"):
            pass

    failing: list[Callable[[], object]] = [
        lambda: load_cassette(path),
        lambda: CassetteModel(no_llm),
        lambda: scenario_data(no_llm),
        lambda: trace_from_cassette(nested),
        replay_a_missing_file,
    ]
    caught: list[harness.CassetteError] = []
    for action in failing:
        try:
            action()
        except harness.CassetteError as exc:  # the point: a plain except, as users write it
            caught.append(exc)
    assert [Path(e.path).name for e in caught] == [
        "corrupt.yaml",
        "no_llm.yaml",
        "no_llm.yaml",
        "nested.yaml",
        "missing.yaml",
    ]


# -- properties: whatever the file holds, a CassetteError or a result -----------------------


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=2048))
def test_arbitrary_bytes_load_or_raise_a_cassette_error(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "any.yaml"
    path.write_bytes(data)
    with contextlib.suppress(harness.CassetteError):
        load_cassette(path)


_KEYS = st.sampled_from(
    [
        "model", "messages", "role", "content", "type", "text", "tools", "tool_calls",
        "function", "name", "arguments", "input", "id", "tool_call_id", "choices",
        "message", "output", "call_id", "input_schema", "parameters", "stream", "system",
        "tool_use_id", "finish_reason", "stop_reason", "delta", "index",
    ]
)  # fmt: skip
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from(["user", "assistant", "tool", "system", "text", "tool_use", "function"]),
    st.text(max_size=8),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=12,
)
_PATHS = st.sampled_from(
    ["https://api.openai.test/v1/chat/completions", "https://api.openai.test/v1/responses",
     "https://api.anthropic.test/v1/messages"]
)  # fmt: skip


@st.composite
def _cassettes(draw: st.DrawFn) -> dict[str, Any]:
    items = []
    for _ in range(draw(st.integers(1, 3))):
        stream = draw(st.booleans())
        answer = draw(_JSON)
        body = (
            "".join(f"data: {json.dumps(v)}\n\n" for v in draw(st.lists(_JSON, max_size=3)))
            if stream
            else json.dumps(answer)
        )
        items.append(
            {
                "request": {
                    "method": "POST",
                    "uri": draw(_PATHS),
                    "body": json.dumps(draw(_JSON)),
                    "headers": {},
                },
                "response": {
                    "status": {"code": draw(st.sampled_from([200, 200, 400, 500]))},
                    "headers": {
                        "content-type": ["text/event-stream" if stream else "application/json"]
                    },
                    "body": {"string": body},
                },
            }
        )
    return {"interactions": items}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_cassettes())
def test_any_provider_shaped_junk_is_shown_checked_and_converted_or_a_cassette_error(
    data: dict[str, Any],
) -> None:
    """Codecs meet every shape a damaged file holds: show, check and to-scenario give a
    result or a ``CassetteError`` (a usage error of the command), never anything else."""
    from harness.cassettes import scenario_data

    cassette = load_cassette(data)
    for action in (show_cassette, lambda c: scenario_data(c, name="x")):
        with contextlib.suppress(harness.UsageError):  # e.g. "holds no LLM request to convert"
            action(cassette)
    assert isinstance(check_cassette_of(data), list)


def check_cassette_of(data: dict[str, Any]) -> list[str]:
    import tempfile

    import yaml

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "c.yaml"
        path.write_text(yaml.safe_dump(data))
        return check_cassette(path)
