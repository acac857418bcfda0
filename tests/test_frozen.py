"""harness._frozen: a maker builds the same instances as the dataclass's own constructor."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import time
from typing import Any

import pytest
from hypothesis import given, strategies as st

from harness._frozen import maker
from harness.loop._calls import PendingCall
from harness.loop._events import ToolCalled, ToolsInjected
from harness.loop._trace import CallRecord
from harness.tools import ToolResult


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Base:
    iteration: int


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Record:
    name: str
    tags: tuple[str, ...] = ()
    seen: list[int] = dataclasses.field(default_factory=list)
    stamp: float = dataclasses.field(default_factory=time.time, compare=False)

    def __post_init__(self) -> None:
        if self.name != self.name.strip():
            object.__setattr__(self, "name", self.name.strip())


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Child(_Base):
    call_id: str
    silent: bool = False


@dataclasses.dataclass(slots=True)
class _Mutable:
    index: int
    calls: list[int] = dataclasses.field(default_factory=list)
    answer: str | None = None


def _same(made: Any, built: Any) -> None:
    assert type(made) is type(built)
    assert made == built
    for field in dataclasses.fields(built):
        if field.compare:  # not a time stamp
            assert getattr(made, field.name) == getattr(built, field.name)


@given(name=st.text(max_size=8), tags=st.lists(st.text(max_size=3), max_size=3).map(tuple))
def test_a_maker_builds_what_the_class_builds(name: str, tags: tuple[str, ...]) -> None:
    made = maker(_Record)(name=name, tags=tags)
    built = _Record(name=name, tags=tags)
    _same(made, built)
    assert made.name == name.strip()  # __post_init__ ran


def test_defaults_and_factories_are_fresh_per_instance() -> None:
    make = maker(_Record)
    first, second = make(name="a"), make(name="a")
    assert first.seen == [] and first.seen is not second.seen
    assert first.stamp <= second.stamp
    given_list = [1]
    assert make(name="a", seen=given_list).seen is given_list


def test_made_instances_stay_frozen_and_round_trip() -> None:
    made = maker(_Record)(name="x", tags=("t",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.name = "y"  # type: ignore[misc]
    assert dataclasses.replace(made, name="y").name == "y"
    assert pickle.loads(pickle.dumps(made)) == made
    assert copy.deepcopy(made) == made
    assert not hasattr(made, "__dict__")


def test_subclasses_of_frozen_bases_are_filled_through_their_slots() -> None:
    made = maker(_Child)(iteration=3, call_id="c")
    _same(made, _Child(iteration=3, call_id="c"))
    assert hash(made) == hash(_Child(iteration=3, call_id="c"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.iteration = 4  # type: ignore[misc]


def test_mutable_dataclasses_get_a_maker_too() -> None:
    made = maker(_Mutable)(1)
    _same(made, _Mutable(1))
    made.answer = "ok"
    assert made.answer == "ok"
    assert maker(_Mutable)(2, answer="a") == _Mutable(2, answer="a")


def test_a_maker_refuses_unknown_and_missing_arguments() -> None:
    make = maker(_Record)
    with pytest.raises(TypeError, match="name"):
        make()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="bogus"):
        make(name="a", bogus=1)  # type: ignore[call-arg]


def test_the_loop_records_are_the_classes_own() -> None:
    record = maker(CallRecord)(id="c", name="add", arguments="{}", content="2", value=2)
    _same(record, CallRecord(id="c", name="add", arguments="{}", content="2", value=2))
    result = maker(ToolResult)(content="caf\ud800", value=1)
    assert result == ToolResult(content="caf\ud800", value=1)
    assert result.content == "caf\ufffd"  # ToolResult.__post_init__ cleaned the surrogate
    event = maker(ToolCalled)(iteration=1, call_id="c", name="add", arguments="{}")
    _same(event, ToolCalled(iteration=1, call_id="c", name="add", arguments="{}"))
    assert maker(PendingCall)(call=None, tool=None) == PendingCall(call=None, tool=None)  # type: ignore[arg-type]
    injected = ToolsInjected(iteration=1, tool_names=("a",), strategy="s", reason="r")
    assert injected.timestamp > 0


def test_classes_that_do_not_qualify_are_refused_at_import_time() -> None:
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Hidden:
        a: int
        b: int = dataclasses.field(default=0, init=False)

    @dataclasses.dataclass(frozen=True, slots=True)
    class WithInitVar:
        a: int
        b: dataclasses.InitVar[int] = 0

    class Plain:
        __slots__ = ("a",)

    @dataclasses.dataclass(frozen=True, slots=True)
    class OwnNew:
        a: int

        def __new__(cls, *args: Any, **kwargs: Any) -> Any:
            return object.__new__(cls)

    for cls, match in [
        (NoSlots, "slotted dataclass"),
        (Hidden, "init=False or InitVar"),
        (WithInitVar, "init=False or InitVar"),
        (Plain, "slotted dataclass"),
        (OwnNew, "own __new__"),
    ]:
        with pytest.raises(TypeError, match=match):
            maker(cls)
