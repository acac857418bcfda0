"""The fast reader (msgspec structs) reads every file as the stdlib reader does.

The stdlib reader (``json`` and the checks in ``_spans``) is the reference: for every file,
the fast reader either declines it (the stdlib reader then reads it, or names what is
wrong) or gives the same spans, attribute for attribute, including the attributes whose
value is refused when read.
"""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from otlp_doc import document, span

from harness import TraceFileError
from harness.traces import _decode, _source, _spans, otel_conversations
from harness.traces._spans import Span

OTLP = Path(__file__).parent / "otlp"


def _stdlib(text: str) -> list[Span]:
    return _spans._from_documents(_spans._documents(text, "f"), "f")


def _attributes(span: Span | _spans.SpanEvent) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in span.attributes:
        try:
            out[key] = ("value", span.attributes[key])
        except _spans._Bad as exc:
            out[key] = ("refused", str(exc))
    return out


def _facts(spans: list[Span]) -> list[Any]:
    """Everything a reader can see of ``spans``."""
    return [
        (
            s.trace_id,
            s.span_id,
            s.parent_id,
            s.name,
            s.start,
            s.end,
            s.scope,
            s.status,
            s.order,
            s.source,
            _attributes(s),
            [(e.name, e.time, _attributes(e)) for e in s.events],
        )
        for s in spans
    ]


@pytest.mark.parametrize("path", sorted(OTLP.glob("*.otlp.jsonl")), ids=lambda p: p.name)
def test_every_recorded_file_reads_the_same_through_the_structs(path: Path) -> None:
    text = path.read_text("utf-8")
    fast = _decode.spans_of_text(text, "f")
    assert fast is not None, "the structs declined a well-formed file"
    assert _facts(fast) == _facts(_stdlib(text))
    assert {type(s) for s in fast} == {Span}
    assert {type(e) for s in fast for e in s.events} <= {_spans.SpanEvent}


# -- generated documents -------------------------------------------------------------------

_text = st.text(max_size=12)
_scalar = st.one_of(
    st.builds(lambda v: {"stringValue": v}, _text),
    st.builds(lambda v: {"intValue": v}, st.integers(-(2**62), 2**62) | st.just("12")),
    st.builds(lambda v: {"boolValue": v}, st.booleans()),
    st.builds(
        lambda v: {"doubleValue": v},
        st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(["1.5", "Infinity"]),
    ),
    st.builds(lambda v: {"bytesValue": v}, _text),
    st.just({}),
    # refused when read (a value of the wrong type inside an AnyValue)
    st.builds(lambda v: {"intValue": v}, _text),
    st.builds(lambda v: {"stringValue": v}, st.integers() | st.none()),
    st.builds(lambda v: {"boolValue": v}, st.integers(0, 1)),
)
_any_value = st.recursive(
    _scalar,
    lambda inner: st.one_of(
        st.builds(lambda vs: {"arrayValue": {"values": vs}}, st.lists(inner, max_size=3)),
        st.builds(
            lambda kv: {"kvlistValue": {"values": [{"key": k, "value": v} for k, v in kv]}},
            st.lists(st.tuples(_text, inner), max_size=3),
        ),
        st.builds(lambda v: {"arrayValue": v}, st.integers() | _text),
        st.builds(lambda v, w: {"stringValue": v, "intValue": w}, _text, st.integers()),
    ),
    max_leaves=6,
)
_attribute = st.one_of(
    st.builds(lambda k, v: {"key": k, "value": v}, _text, _any_value),
    st.builds(lambda k: {"key": k}, _text),
    st.builds(lambda k: {"key": k, "value": None}, _text),
    st.just({"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}),
)
_hex16 = st.integers(0, 2**64 - 1).map(lambda n: f"{n:016x}")
_span_id = st.one_of(_hex16, _hex16.map(str.upper), st.just("AAAAAAAAAAE="))
_time = st.one_of(st.integers(0, 2**63), st.integers(0, 2**63).map(str), st.none())


@st.composite
def _span_data(draw: st.DrawFn) -> dict[str, Any]:
    data: dict[str, Any] = {
        "traceId": draw(_hex16.map(lambda h: h * 2)),
        "spanId": draw(_span_id),
        "name": draw(_text),
        "startTimeUnixNano": draw(_time),
        "endTimeUnixNano": draw(_time),
        "attributes": draw(st.lists(_attribute, max_size=5) | st.none()),
    }
    if draw(st.booleans()):
        data["parentSpanId"] = draw(_span_id | st.just("") | st.none())
    if draw(st.booleans()):
        event = {"name": draw(_text), "timeUnixNano": draw(_time)}
        event["attributes"] = draw(st.lists(_attribute, max_size=3))
        data["events"] = [event]
    if draw(st.booleans()):
        data["status"] = {"code": draw(st.sampled_from([0, 1, 2, "STATUS_CODE_ERROR"]))}
    for key in draw(st.lists(st.sampled_from(["name", "events", "status", "attributes"]))):
        data.pop(key, None)  # a field left out
    return data


_DAMAGE: list[tuple[str, Any]] = [
    ("spanId", 42),
    ("spanId", "zz"),
    ("traceId", "0af7"),
    ("name", ["x"]),
    ("attributes", {"a": 1}),
    ("attributes", [{"key": 1}]),
    ("attributes", [{"key": "k", "value": "not an AnyValue"}]),
    ("startTimeUnixNano", "soon"),
    ("startTimeUnixNano", True),
    ("status", {"code": 3}),
    ("status", {"code": True}),
    ("status", {"code": 1.0}),
    ("events", {}),
    ("events", [{"name": 5}]),
    ("parentSpanId", 0),
    ("attributes", [{"key": "k", "value": {"doubleValue": float("inf")}}]),  # bare Infinity
]


@st.composite
def _file_text(draw: st.DrawFn, damaged: bool) -> str:
    scope = draw(st.sampled_from([{"scope": {"name": "s"}}, {"instrumentationLibrary": {}}, {}]))
    spans = draw(st.lists(_span_data(), max_size=4))
    if damaged:
        spans.append(draw(_span_data()))
        key, bad = draw(st.sampled_from(_DAMAGE))
        spans[draw(st.integers(0, len(spans) - 1))][key] = bad
    cut = draw(st.integers(0, len(spans)))
    documents = [
        {"resourceSpans": [{"scopeSpans": [{**scope, "spans": part}]}]}
        for part in (spans[:cut], spans[cut:])
    ]
    if draw(st.booleans()):
        return json.dumps(documents[1], indent=draw(st.sampled_from([None, 2])))
    return "\n".join(json.dumps(d, ensure_ascii=draw(st.booleans())) for d in documents) + "\n"


def _outcome(read: Any, text: str) -> Any:
    try:
        return _facts(read(text))
    except (TraceFileError, _spans._Bad) as exc:
        return ("error", str(exc))


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(_file_text(damaged=False))
def test_the_structs_read_generated_files_as_the_stdlib_reader(text: str) -> None:
    fast = _decode.spans_of_text(text, "f")
    assert fast is not None, "the structs declined a well-formed file"
    assert _facts(fast) == _outcome(_stdlib, text)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(_file_text(damaged=True))
def test_the_structs_decline_what_they_would_read_otherwise(text: str) -> None:
    fast = _decode.spans_of_text(text, "f")
    if fast is not None:  # damage the stdlib reader tolerates too (an empty list of events)
        assert _facts(fast) == _outcome(_stdlib, text)


def test_line_separators_inside_strings_are_not_line_ends(tmp_path: Path) -> None:
    from harness import ScriptedModel, call, llm_tool, reply, run
    from harness.traces import write_otel

    @llm_tool
    def note() -> str:
        """A note."""
        return "one\u2028two\x85three\x1cfour"

    path = write_otel(
        run(ScriptedModel([call("note"), reply("ok")]), "go", tools=[note]), tmp_path / "r"
    )
    path = write_otel(run(ScriptedModel([reply("ok")]), "again"), path, append=True)
    text = path.read_text("utf-8")
    assert "\u2028" in text  # written as it is (ensure_ascii=False)
    found = otel_conversations(path)
    assert found[0].trace().calls[0].content == "one\u2028two\x85three\x1cfour"
    assert len(found) == 2
    assert _facts(_decode.spans_of_text(text, "f") or []) == _facts(_stdlib(text))


_json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
_json_text = st.one_of(
    _json_value.map(json.dumps),
    _json_value.map(lambda v: json.dumps(v, ensure_ascii=False)),
    st.text(alphabet='[]{}",:0123456789.eE-+ \\ud800tfnaNIy', max_size=20),
    st.just("[" * 5000 + "]" * 5000),
)


@settings(max_examples=300)
@given(_json_text)
def test_json_text_in_attributes_parses_as_json_parses_it(text: str) -> None:
    (one,) = _stdlib(json.dumps(document(span(1, "chat m", {}))))
    try:
        expected: Any = ("value", json.loads(text))
    except (ValueError, RecursionError):
        expected = "refused"
    try:
        got: Any = ("value", one.parse_json(text, what="it"))
    except TraceFileError:
        got = "refused"
    assert repr(got) == repr(expected)  # repr: NaN is not equal to itself


def test_a_value_refused_when_read_is_refused_the_same_way(tmp_path: Path) -> None:
    bad = span(3, "chat m", {"gen_ai.operation.name": "chat"})
    bad["attributes"] += [
        {"key": "deep", "value": {"arrayValue": {"values": [{"arrayValue": {"values": []}}]}}},
        {"key": "n", "value": {"intValue": "twelve"}},
    ]
    text = json.dumps(document(bad))
    (fast,) = _decode.spans_of_text(text, "f") or []
    (slow,) = _stdlib(text)
    for one in (fast, slow):
        with pytest.raises(TraceFileError, match=r"span 0000000000000003 .*'n': intValue should"):
            one.get("n")
        assert one.get("deep") == [[]]


def test_a_file_the_structs_refuse_is_read_by_the_stdlib_reader(tmp_path: Path) -> None:
    odd = span(4, "chat m", {"gen_ai.operation.name": "chat"})
    odd["events"] = {}  # falsy: no events to the stdlib reader, not a list to the structs
    path = tmp_path / "odd.otlp.jsonl"
    path.write_text(json.dumps(document(odd)), encoding="utf-8")
    assert _decode.spans_of_text(path.read_text("utf-8"), str(path)) is None
    (found,) = otel_conversations(path)
    assert found.requests[0].span.span_id == "0000000000000004"


def test_a_file_is_read_without_msgspec_by_the_stdlib_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "one.otlp.jsonl"
    path.write_text(json.dumps(document(span(1, "chat m", {}))), encoding="utf-8")
    with_msgspec = otel_conversations(path)
    monkeypatch.setitem(sys.modules, "msgspec", None)
    monkeypatch.delitem(sys.modules, "harness.traces._decode", raising=False)
    read = []
    real = _source.spans_of_text
    monkeypatch.setattr(_source, "spans_of_text", lambda *a: read.append(a) or real(*a))
    without = otel_conversations(path)
    assert read, "the stdlib reader read the file"
    assert [c.requests[0].span.span_id for c in without] == [
        c.requests[0].span.span_id for c in with_msgspec
    ]


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_left_as_it_was(tmp_path: Path, enabled: bool) -> None:
    path = tmp_path / "one.otlp.jsonl"
    path.write_text(json.dumps(document(span(1, "chat m", {"gen_ai.operation.name": "chat"}))))
    broken = tmp_path / "broken.otlp.jsonl"
    broken.write_text("{", encoding="utf-8")
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        (found,) = otel_conversations(path)
        assert gc.isenabled() is enabled
        found.trace()
        assert gc.isenabled() is enabled
        with pytest.raises(TraceFileError):
            otel_conversations(broken)
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
