"""``@tool_provider``: marking classes, checking them, finding instances in results."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from harness import InvalidToolProvider
from harness.injection import ProviderSpec, find_providers, provider_spec, tool_provider
from harness.injection._providers import provider_id, tool_names_for
from harness.tools import llm_tool


@tool_provider
class Widget:
    def __init__(self, id: Any) -> None:
        self.id = id

    @llm_tool
    def spin(self, times: int = 1) -> str:
        """Spin the widget."""
        return f"spun {times}"

    def helper(self) -> None:
        """Not a tool."""


@tool_provider(prefix="gadget", id_attr="serial")
class Gadget(Widget):
    def __init__(self, serial: str) -> None:
        super().__init__(id=None)
        self.serial = serial

    @llm_tool
    def beep(self) -> str:
        """Beep."""
        return "beep"


def test_spec_defaults_and_inheritance() -> None:
    spec = provider_spec(Widget)
    assert spec == provider_spec(Widget(1))
    assert isinstance(spec, ProviderSpec)
    assert (spec.prefix, spec.id_attr) == ("widget", "id")
    assert [attr for attr, _ in spec.methods] == ["spin"]
    gadget = provider_spec(Gadget("g"))
    assert gadget is not None and (gadget.prefix, gadget.id_attr) == ("gadget", "serial")
    assert [attr for attr, _ in gadget.methods] == ["spin", "beep"]
    assert provider_spec(object()) is None and provider_spec(int) is None


def test_tool_names_sanitise_the_id() -> None:
    spec = provider_spec(Widget)
    assert spec is not None
    assert tool_names_for(spec, provider_id(Widget("w-1.x"), spec)) == [("spin", "widget_w1x_spin")]
    assert provider_id(Widget(7), spec) == "7"


def test_class_without_tool_methods_is_rejected_at_decoration() -> None:
    with pytest.raises(InvalidToolProvider) as info:

        @tool_provider
        class Empty:
            def method(self) -> None:
                """Not marked."""

    assert "has no @llm_tool methods" in str(info.value)
    assert "Empty" in str(info.value) and "decorate at least one method with @llm_tool" in str(
        info.value
    )


def test_other_decoration_mistakes() -> None:
    with pytest.raises(InvalidToolProvider, match="decorates classes"):
        tool_provider(lambda: None)  # type: ignore[arg-type, type-var]
    with pytest.raises(InvalidToolProvider, match=r"prefix '--' .* has no letters or digits"):
        tool_provider(prefix="--")(Widget)
    with pytest.raises(InvalidToolProvider, match="id_attr must be an attribute name, got ''"):
        tool_provider(id_attr="")(Widget)


def test_invalid_ids() -> None:
    spec = provider_spec(Widget)
    assert spec is not None
    with pytest.raises(InvalidToolProvider, match=r"Widget.id=None cannot name tools"):
        provider_id(Widget(None), spec)


class Holder(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    widget: Widget
    label: str = "x"


@dataclasses.dataclass
class Box:
    content: Any


def test_find_providers_walks_containers_models_and_dataclasses() -> None:
    a, b, c, d, e = (Widget(i) for i in "abcde")
    value = {
        "list": [a, (b,)],
        "model": Holder(widget=c),
        "box": Box(content={"deep": [d]}),
        "set": frozenset([e]),
        "scalars": [1, 2.0, "s", b"b", True, None],
        "class": Widget,  # a class is not an instance
    }
    found = list(find_providers(value))
    assert found == [a, b, c, d, e]


def test_find_providers_handles_cycles_repeats_and_limits() -> None:
    w = Widget("w")
    loop: list[Any] = [w]
    loop.append(loop)
    assert list(find_providers(loop)) == [w]
    assert list(find_providers([w, w, {"again": w}])) == [w]
    assert list(find_providers(w)) == [w]
    # a provider's own attributes are not searched
    outer = Widget("outer")
    outer.inner = Widget("inner")  # type: ignore[attr-defined]
    assert list(find_providers(outer)) == [outer]
    assert list(find_providers([[Widget(1)]], limit=2)) == []
