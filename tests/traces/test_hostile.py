"""A hostile trace file is a clear error naming the span, in bounded time and memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from otlp_doc import document, span, value

from harness import TraceFileError
from harness.traces import _spans, otel_conversations

CHAT = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}


def _read(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "hostile.jsonl"
    path.write_text(text, encoding="utf-8")
    return otel_conversations(path)


def test_nesting_past_the_json_reader_names_the_span(tmp_path: Path) -> None:
    depth = 100_000
    deep = '{"arrayValue":{"values":[' * depth + '{"stringValue":"x"}' + "]}}" * depth
    hostile = span(7, "chat m", CHAT)
    hostile["attributes"].append({"key": "gen_ai.input.messages", "value": "DEEP"})
    text = json.dumps(document(span(1, "ok", CHAT), hostile)).replace('"DEEP"', deep)
    with pytest.raises(TraceFileError, match="span 0000000000000007: an attribute nests deeper"):
        _read(tmp_path, text)


def test_nesting_in_a_structured_value_names_the_span_and_attribute() -> None:
    deep: Any = "x"
    for _ in range(100):
        deep = [deep]
    hostile = span(3, "chat m", {**CHAT, "gen_ai.input.messages": deep})
    with pytest.raises(TraceFileError, match=r"span 0000000000000003 \('chat m'\).*'gen_ai\.input"):
        otel_conversations(document(hostile))


def test_nesting_in_json_text_names_the_span() -> None:
    text = "[" * 5000 + "]" * 5000
    hostile = span(4, "chat m", {**CHAT, "gen_ai.input.messages": text})
    with pytest.raises(
        TraceFileError, match=r"span 0000000000000004.*nests deeper than the JSON reader allows"
    ):
        otel_conversations(document(hostile))


def test_a_huge_attribute_names_the_span(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_spans, "MAX_ATTRIBUTE_CHARS", 1000)
    hostile = span(5, "chat m", {**CHAT, "gen_ai.output.messages": "x" * 5000})
    with pytest.raises(TraceFileError, match=r"span 0000000000000005.*longer than 1000"):
        otel_conversations(document(hostile))


def test_a_file_too_large_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_spans, "MAX_FILE_BYTES", 100)
    with pytest.raises(TraceFileError, match="larger than 100 bytes"):
        _read(tmp_path, json.dumps(document(span(1, "chat m", CHAT))))


def test_parent_ids_in_a_cycle_name_the_span() -> None:
    one, two = span(1, "a", CHAT, parent=2), span(2, "b", CHAT, parent=1)
    with pytest.raises(TraceFileError, match="parent ids form a cycle"):
        otel_conversations(document(one, two))
    myself = span(3, "c", CHAT, parent=3)
    with pytest.raises(TraceFileError, match=r"span 0000000000000003 \('c'\).*cycle"):
        otel_conversations(document(myself))


def test_a_long_parent_chain_is_linear() -> None:
    chain = [span(1, "root", {})]
    chain += [span(k, f"s{k}", {}, parent=k - 1) for k in range(2, 5_000)]
    chain.append(span(5_000, "chat m", {**CHAT, "gen_ai.output.messages": "[]"}, parent=4_999))
    (found,) = otel_conversations(document(*chain))
    assert len(found.requests) == 1


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda s: s.update(spanId=42), "spanId should be a hex string"),
        (lambda s: s.update(traceId="zz"), "traceId should be 32 hex digits"),
        (lambda s: s.update(attributes={"a": 1}), "attributes should be a list"),
        (lambda s: s.update(name=["x"]), "name should be a string"),
        (lambda s: s.update(startTimeUnixNano="soon"), "startTimeUnixNano should be nanoseconds"),
        (lambda s: s.update(status={"code": 9}), "status.code should be 0, 1 or 2"),
        (lambda s: s["attributes"].append({"key": 1}), "expected a {key, value} object"),
    ],
)
def test_wrong_types_name_the_span(change: Any, problem: str) -> None:
    hostile = span(9, "chat m", CHAT)
    change(hostile)
    with pytest.raises(TraceFileError, match=problem) as raised:
        otel_conversations(document(hostile))
    assert "0000000000000009" in str(raised.value) or "spans[0]" in str(raised.value)


def test_a_value_of_the_wrong_type_names_the_attribute() -> None:
    hostile = span(6, "chat m", CHAT)
    hostile["attributes"].append({"key": "gen_ai.input.messages", "value": {"intValue": "x"}})
    with pytest.raises(TraceFileError, match=r"span 0000000000000006.*'gen_ai.input.messages'"):
        otel_conversations(document(hostile))
    wrong = span(8, "chat m", {**CHAT, "gen_ai.input.messages": json.dumps({"role": "user"})})
    with pytest.raises(TraceFileError, match="should be a list of messages"):
        otel_conversations(document(wrong))


def test_not_otlp_json(tmp_path: Path) -> None:
    with pytest.raises(TraceFileError, match="is not JSON"):
        _read(tmp_path, "resourceSpans: []")
    with pytest.raises(TraceFileError, match="resourceSpans should be a list"):
        _read(tmp_path, json.dumps({"resourceSpans": {}}))
    with pytest.raises(TraceFileError, match="twice"):
        otel_conversations(document(span(1, "a", CHAT), span(1, "a", CHAT)))
    assert value(True) == {"boolValue": True}
