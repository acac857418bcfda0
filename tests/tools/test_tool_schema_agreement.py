"""Property: the pydantic validation of function tools agrees with their JSON Schema.

Function tools validate arguments with pydantic in strict JSON mode (about 10x faster
than jsonschema). The schema the model sees is the contract, so: every value valid
under the tool's JSON Schema (Draft 2020-12, checked with jsonschema) must be accepted
by ``Tool.prepare``, and the invalid values tried here must be rejected by both.

Known, deliberate difference (not generated here): for ``set[...]`` parameters the schema
says ``uniqueItems`` but pydantic accepts duplicates and removes them. Tuples are not
generated because hypothesis-jsonschema does not understand ``prefixItems``.
"""

import enum
import inspect
import json
from collections.abc import Callable
from typing import Any, Literal, Optional

import hypothesis_jsonschema._from_schema as hjs_internals
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.internal.conjecture import utils as conjecture_utils
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from harness.tools import CallContext, PreparedCall, Tool, ToolResult, as_tool

# -- compatibility: hypothesis-jsonschema 0.23.1 calls many.more(), which newer
# hypothesis versions replaced by a context manager + iterator. Adapt the old protocol
# for the duration of these tests only.


class _OldStyleMany:
    def __init__(self, data: Any, **kwargs: Any) -> None:
        self._many = conjecture_utils.many(data, **kwargs)
        self._many.__enter__()
        self._elements = iter(self._many)

    def more(self) -> bool:
        try:
            next(self._elements)
        except StopIteration:
            self._many.__exit__(None, None, None)
            return False
        return True

    def reject(self, why: str | None = None) -> None:
        self._many.reject(why)


class _CompatUtils:
    many = _OldStyleMany

    def __getattr__(self, name: str) -> Any:
        return getattr(conjecture_utils, name)


@pytest.fixture(autouse=True)
def _hypothesis_jsonschema_compat(monkeypatch: pytest.MonkeyPatch) -> None:
    if not hasattr(conjecture_utils.many, "more"):
        monkeypatch.setattr(hjs_internals, "cu", _CompatUtils())


# -- generated function tools -------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    street: str
    number: int = 1


class Point(BaseModel):
    x: float
    y: float = 0.0


_LEAVES: list[Any] = [
    str,
    int,
    float,
    bool,
    Color,
    Priority,
    Literal["a", "b"],
    Literal[1, "x"],
    Address,
    Point,
]


def _extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        inner.map(lambda t: list[t]),  # type: ignore[valid-type]
        inner.map(lambda t: dict[str, t]),  # type: ignore[valid-type]
        inner.map(lambda t: Optional[t]),  # noqa: UP045
    )


_types = st.recursive(st.sampled_from(_LEAVES), _extend, max_leaves=3)
_params = st.lists(st.tuples(_types, st.booleans()), min_size=1, max_size=4)


def _function(params: list[tuple[Any, bool]]) -> Callable[..., Any]:
    """A function ``f(*, p0: T0, p1: T1 = default, ...)`` returning its keyword arguments."""

    def f(**kwargs: Any) -> dict[str, Any]:
        return kwargs

    parameters = []
    for index, (annotation, with_default) in enumerate(params):
        default: Any = inspect.Parameter.empty
        if with_default:
            default = {int: 0, str: "", bool: False}.get(annotation)
            if default is None and not _is_optional(annotation):
                default = inspect.Parameter.empty
        parameters.append(
            inspect.Parameter(
                f"p{index}", inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default
            )
        )
    f.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    f.__annotations__ = {p.name: p.annotation for p in parameters}
    return f


def _is_optional(annotation: Any) -> bool:
    return type(None) in getattr(annotation, "__args__", ())


def _reencode(value: Any, data: st.DataObject) -> Any:
    """The same JSON value, with some integers written as integral floats (``3`` -> ``3.0``).

    JSON Schema cannot tell them apart, so neither may the tool.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and abs(value) < 2**53:
        return float(value) if data.draw(st.booleans(), label="as float") else value
    if isinstance(value, list):
        return [_reencode(v, data) for v in value]
    if isinstance(value, dict):
        return {k: _reencode(v, data) for k, v in value.items()}
    return value


def _prepare(tool: Tool, value: Any) -> PreparedCall | ToolResult:
    return tool.prepare(json.dumps(value), CallContext())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=_params, data=st.data())
def test_values_valid_under_the_schema_are_accepted(
    params: list[tuple[Any, bool]], data: st.DataObject
) -> None:
    tool = as_tool(_function(params))
    schema = dict(tool.parameters)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)

    value = _reencode(data.draw(from_schema(schema), label="arguments"), data)
    assert validator.is_valid(value)
    prepared = _prepare(tool, value)
    assert isinstance(prepared, PreparedCall), (schema, value, prepared)
    # the function receives exactly the parameters (defaults filled in)
    assert set(prepared.kwargs) == {f"p{i}" for i in range(len(params))}


# wrong-typed replacements for one argument, tried in order until the schema rejects one
_WRONG: list[Any] = ["wrong \u2603", 12345, 1.5, True, None, [1, "a"], {"k": [None]}]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=_params, data=st.data())
def test_invalid_values_are_rejected_by_both(
    params: list[tuple[Any, bool]], data: st.DataObject
) -> None:
    tool = as_tool(_function(params))
    schema = dict(tool.parameters)
    validator = Draft202012Validator(schema)
    value: Any = data.draw(from_schema(schema), label="arguments")

    def rejected(bad: Any, mention: str) -> None:
        assert not validator.is_valid(bad)
        result = _prepare(tool, bad)
        assert isinstance(result, ToolResult), (schema, bad)
        assert result.is_error
        assert result.error_kind == "invalid_arguments"
        assert mention in result.content, result.content

    # 1. a required argument missing
    for name in schema.get("required", []):
        rejected({k: v for k, v in value.items() if k != name}, f"argument {name!r}")
    # 2. an argument the tool does not have
    rejected({**value, "not_a_param": 1}, "argument 'not_a_param'")
    # 3. not an object at all
    for bad in ([value], "text", 3, None):
        rejected(bad, f"Tool {tool.name!r}")
    # 4. one argument of the wrong type
    name = data.draw(st.sampled_from(sorted(schema["properties"])), label="argument")
    for wrong in _WRONG:
        candidate = {**value, name: wrong}
        if not validator.is_valid(candidate):
            rejected(candidate, f"argument '{name}")
            break


@pytest.mark.parametrize(
    ("annotation", "raw"),
    [
        (int, "3.0"),  # JSON Schema integers include integral floats
        (int, "-1e2"),
        (list[int], "[1, 2.0]"),
        (Optional[int], "4.0"),  # noqa: UP045
        (Priority, "2.0"),
        (Literal[1, "x"], "1.0"),
        (str, '"\\udc00"'),  # lone surrogate escapes are valid JSON strings for jsonschema
    ],
)
def test_known_strict_mode_gaps_are_closed(annotation: Any, raw: str) -> None:
    tool = as_tool(_function([(annotation, False)]))
    arguments = f'{{"p0": {raw}}}'
    assert Draft202012Validator(tool.parameters).is_valid(json.loads(arguments))
    prepared = tool.prepare(arguments, CallContext())
    assert isinstance(prepared, PreparedCall), prepared


def test_set_parameters_are_more_lenient_than_the_schema() -> None:
    # the documented remaining difference: duplicates are removed rather than refused
    tool = as_tool(_function([(set[int], False)]))
    assert not Draft202012Validator(tool.parameters).is_valid({"p0": [1, 1]})
    prepared = tool.prepare('{"p0": [1, 1]}', CallContext())
    assert isinstance(prepared, PreparedCall)
    assert prepared.kwargs == {"p0": {1}}
