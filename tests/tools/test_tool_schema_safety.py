"""Tool schemas from strangers: references never fetched, depth bounded, patterns that cannot hang.

Every ``$ref`` test points at a loopback server that counts its requests: it must count
zero. Hanging code is bounded by the ``bounded`` fixture (SIGALRM), so a regression
fails instead of stalling the suite.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from harness import ScriptedModel, ToolDefinitionError, call, reply, run
from harness.loop import arun
from harness.tools import CallContext, Tool, ToolResult
from harness.tools._jsonschema import MAX_SCHEMA_DEPTH, schema_problems
from harness.tools._patterns import PatternTimeout, pattern_search, time_budget

CATASTROPHIC = "^(a+)+$"
EVIL_TEXT = "a" * 34 + "!"  # Python's re: over 40 s; the engine here: microseconds


def _obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def _handler(arguments: dict[str, Any]) -> str:
    return "ran"


def _deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = _obj(a=schema)
    return schema


# -- references -----------------------------------------------------------------------


def test_a_remote_reference_is_refused_at_definition_and_never_fetched(
    counting_server: Any,
) -> None:
    url = f"{counting_server.url}/s.json"
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_schema("r", "d", _obj(x={"$ref": url}), _handler)
    message = str(caught.value)
    assert "tool 'r'" in message
    assert f"$ref: {url!r} at /properties/x does not resolve" in message
    assert "never retrieved" in message and "#/$defs/<name>" in message
    assert counting_server.requests == []


def test_a_relative_reference_under_a_remote_id_is_never_fetched(counting_server: Any) -> None:
    schema = {"$id": f"{counting_server.url}/root.json", **_obj(x={"$ref": "other.json"})}
    with pytest.raises(ToolDefinitionError, match=r"'other\.json' at /properties/x"):
        Tool.from_schema("r", "d", schema, _handler)
    assert counting_server.requests == []


def test_a_file_reference_is_refused_and_never_read(tmp_path: Path) -> None:
    target = tmp_path / "s.json"
    target.write_text('{"type": "string"}')  # resolvable if it were read
    with pytest.raises(ToolDefinitionError, match=r"file://.*does not resolve"):
        Tool.from_schema("r", "d", _obj(x={"$ref": target.as_uri()}), _handler)


@pytest.mark.parametrize(
    ("reference", "shown"),
    [
        ("#/definitions/missing", "PointerToNowhere"),
        ("urn:example:unknown", "Unresolvable"),
        ("#nowhere", "NoSuchAnchor"),
    ],
)
def test_an_unresolvable_reference_is_a_definition_error_naming_tool_and_reference(
    reference: str, shown: str
) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_schema("r", "d", _obj(x={"$ref": reference}), _handler)
    assert caught.value.target == "tool 'r'"
    (problem,) = caught.value.problems
    assert f"$ref: {reference!r} at /properties/x" in problem and shown in problem


def test_a_dynamic_reference_is_checked_like_a_reference() -> None:
    with pytest.raises(ToolDefinitionError, match=r"\$dynamicRef: 'urn:x#y'"):
        Tool.from_schema("r", "d", _obj(x={"$dynamicRef": "urn:x#y"}), _handler)


def test_a_reference_inside_a_referenced_non_schema_place_is_checked() -> None:
    # "#/x-extra" is no subschema place: only following the reference finds the inner one
    schema = {**_obj(x={"$ref": "#/x-extra"}), "x-extra": {"$ref": "urn:missing"}}
    with pytest.raises(ToolDefinitionError, match=r"'urn:missing' at #/x-extra"):
        Tool.from_schema("r", "d", schema, _handler)


def test_local_references_anchors_ids_and_the_metaschema_resolve_offline(
    counting_server: Any,
) -> None:
    schema = {
        "type": "object",
        "$defs": {
            "name": {"type": "string", "minLength": 1},
            "tagged": {"$anchor": "tag", "type": "integer"},
            "node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            },
        },
        "properties": {
            "name": {"$ref": "#/$defs/name"},
            "tag": {"$ref": "#tag"},
            "tree": {"$ref": "#/$defs/node"},
            "schema": {"$ref": "https://json-schema.org/draft/2020-12/schema"},
            "nested": {
                "$id": "urn:harness:nested",
                "$defs": {"n": {"type": "number"}},
                "$ref": "#/$defs/n",
            },
        },
    }
    tool = Tool.from_schema("r", "d", schema, _handler)
    context = CallContext()
    good = tool.prepare(
        '{"name": "x", "tag": 1, "tree": {"kids": [{"kids": []}]}, "schema": {}, "nested": 2}',
        context,
    )
    assert not isinstance(good, ToolResult)
    bad = tool.prepare('{"name": "", "tag": "one", "nested": "two"}', context)
    assert isinstance(bad, ToolResult) and bad.error_kind == "invalid_arguments"
    for argument in ("name", "tag", "nested"):
        assert f"argument {argument!r}" in bad.content
    assert counting_server.requests == []


def test_a_tool_built_without_from_schema_is_checked_before_its_first_call(
    counting_server: Any,
) -> None:
    tool = Tool(
        name="direct",
        description="d",
        parameters=_obj(x={"$ref": f"{counting_server.url}/s.json"}),
        handler=_handler,
    )
    with pytest.raises(ToolDefinitionError, match="tool 'direct'") as caught:
        run(ScriptedModel([call("direct", x=1), reply("done")]), "go", tools=[tool])
    assert caught.value.trace is not None and caught.value.messages is not None
    assert counting_server.requests == []


references = st.one_of(
    st.builds(lambda path: f"/{path}.json", st.text("abcxyz", min_size=1, max_size=8)),
    st.sampled_from(["s.json", "../s.json", "//127.0.0.1:9/x", "#/$defs/missing", "#anchor"]),
    st.text("abc", min_size=1, max_size=5).map(lambda s: f"urn:x:{s}"),
    st.text("abc/", min_size=1, max_size=8).map(lambda s: f"#/{s}"),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(reference=references, where=st.sampled_from(["property", "items", "allOf", "defs"]))
def test_property_no_reference_outside_the_schema_is_ever_fetched(
    counting_server: Any, reference: str, where: str
) -> None:
    ref = counting_server.url + reference if reference.startswith("/") else reference
    sub = {"$ref": ref}
    placed = {
        "property": _obj(x=sub),
        "items": _obj(x={"type": "array", "items": sub}),
        "allOf": {"type": "object", "allOf": [sub]},
        "defs": {**_obj(x={"$ref": "#/$defs/d"}), "$defs": {"d": sub}},
    }[where]
    with pytest.raises(ToolDefinitionError, match="does not resolve"):
        Tool.from_schema("r", "d", placed, _handler)
    assert counting_server.requests == []


# -- depth ----------------------------------------------------------------------------


def test_a_schema_nested_100_levels_is_a_definition_error_not_a_recursion_error() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_schema("deep", "d", _deep(100), _handler)
    assert caught.value.problems == (
        f"parameters is nested 201 levels deep; at most {MAX_SCHEMA_DEPTH} are supported "
        '(define recursive structures once under "$defs" and refer to them with "$ref")',
    )


def test_the_depth_check_itself_survives_any_depth() -> None:
    schema: Any = {"type": "string"}
    for _ in range(100_000):
        schema = {"not": schema}
    (problem,) = schema_problems(schema)
    assert "nested 100001 levels deep" in problem


def test_a_schema_at_the_depth_limit_works() -> None:
    levels = (MAX_SCHEMA_DEPTH - 1) // 2
    tool = Tool.from_schema("ok", "d", _deep(levels), _handler)
    arguments: Any = "x"
    for _ in range(levels):
        arguments = {"a": arguments}
    assert not isinstance(tool.prepare(str(arguments).replace("'", '"'), CallContext()), ToolResult)


# -- patterns -------------------------------------------------------------------------


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_catastrophic_pattern_gets_its_verdict_without_backtracking(
    driver: str, bounded: Any
) -> None:
    tool = Tool.from_schema("r", "d", _obj(x={"type": "string", "pattern": CATASTROPHIC}), _handler)
    model = ScriptedModel([call("r", x=EVIL_TEXT), call("r", x="aaaa"), reply("done")])
    with bounded(20):
        if driver == "sync":
            result = run(model, "go", tools=[tool], tool_timeout=2)
        else:
            result = asyncio.run(arun(model, "go", tools=[tool], tool_timeout=2))
    first, second = result.trace.calls
    assert first.error_kind == "invalid_arguments"
    assert f"argument 'x': '{EVIL_TEXT}' does not match '^(a+)+$'" in first.content
    assert second.content == "ran"


def test_catastrophic_pattern_properties_and_additional_properties_are_bounded(
    bounded: Any,
) -> None:
    schema = {
        "type": "object",
        "patternProperties": {CATASTROPHIC: {"type": "integer"}},
        "additionalProperties": False,
    }
    tool = Tool.from_schema("r", "d", schema, _handler)
    with bounded(20):
        result = tool.prepare(f'{{"{EVIL_TEXT}": 1, "aaa": "x"}}', CallContext())
    assert isinstance(result, ToolResult) and result.error_kind == "invalid_arguments"
    assert f"'{EVIL_TEXT}' does not match any of the regexes: '^(a+)+$'" in result.content
    assert "argument 'aaa': 'x' is not of type 'integer'" in result.content


def test_a_look_around_pattern_that_backtracks_is_cut_at_the_tool_timeout(
    bounded: Any,
) -> None:
    pattern = "^(?=a)(a|aa)+$"  # look-ahead: no linear engine; backtracks on the text
    tool = Tool.from_schema("r", "d", _obj(x={"type": "string", "pattern": pattern}), _handler)
    model = ScriptedModel([call("r", x="a" * 60 + "!"), call("r", x="aaa"), reply("done")])
    with bounded(20):
        result = run(model, "go", tools=[tool], tool_timeout=0.2)
    first, second = result.trace.calls
    assert first.error_kind == "timeout"
    assert first.content == (
        "Tool 'r': the arguments could not be checked in time: the pattern "
        "'^(?=a)(a|aa)+$' did not finish within the 0.2s budget (it backtracks on this "
        "text). The call was not run; send shorter or simpler values."
    )
    assert second.content == "ran"


def test_without_a_tool_timeout_the_default_budget_bounds_a_look_around_pattern(
    bounded: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.tools import _patterns

    monkeypatch.setattr(_patterns, "DEFAULT_BUDGET", 0.2)
    with bounded(20), pytest.raises(PatternTimeout, match=r"within the 0\.2s budget"):
        pattern_search("^(?=a)(a|aa)+$", "a" * 60 + "!")


def test_a_lone_surrogate_in_the_text_is_searched_correctly() -> None:
    assert pattern_search("a", "a\ud800") is True
    assert pattern_search("^b", "a\ud800") is False


def test_a_budget_spent_by_one_pattern_is_spent_for_the_next(bounded: Any) -> None:
    with bounded(20), time_budget(0.2):
        with pytest.raises(PatternTimeout):
            pattern_search("^(?=a)(a|aa)+$", "a" * 60 + "!")
        with pytest.raises(PatternTimeout):
            pattern_search("(?=x)x", "x")  # would take microseconds, but nothing is left


_PIECES = st.sampled_from(["a", "b", "ab", ".", "[ab]", "[^a]", r"\d", "x?", "(a|b)", "(ab)*"])
_QUANTIFIERS = st.sampled_from(["", "", "*", "+", "?", "{1,2}"])
_PATTERNS = st.builds(
    lambda anchor_start, parts, anchor_end: anchor_start + "".join(parts) + anchor_end,
    st.sampled_from(["", "^"]),
    st.lists(st.builds(lambda p, q: f"(?:{p}){q}" if q else p, _PIECES, _QUANTIFIERS), max_size=4),
    st.sampled_from(["", "$"]),
)


@settings(max_examples=300, deadline=None)
@given(pattern=_PATTERNS, text=st.text("ab1x\ud800 ", max_size=10))
def test_property_the_bounded_engine_agrees_with_python_re(pattern: str, text: str) -> None:
    assert pattern_search(pattern, text) == (re.search(pattern, text) is not None)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    inner=st.sampled_from(["a+", "a*", "(a|a)", "(a|aa)", "a?a"]),
    outer=st.sampled_from(["+", "*", "{1,100}"]),
    length=st.integers(20, 200),
)
def test_property_nested_quantifiers_never_hang_validation(
    bounded: Any, inner: str, outer: str, length: int
) -> None:
    pattern = f"^({inner}){outer}$"
    tool = Tool.from_schema("r", "d", _obj(x={"type": "string", "pattern": pattern}), _handler)
    with bounded(20):
        result = tool.prepare(f'{{"x": "{"a" * length}!"}}', CallContext())
    assert isinstance(result, ToolResult) and result.error_kind == "invalid_arguments"
