"""Toolset: ordered, O(1) lookup, duplicate and name checks, cached definitions."""

import pytest

from harness._errors import DuplicateToolName, InvalidToolName, UsageError
from harness.tools import Tool, Toolset, as_tool, llm_tool


@llm_tool
def alpha(x: int) -> int:
    """Alpha."""
    return x


@llm_tool
def beta() -> str:
    """Beta."""
    return "b"


def gamma(text: str) -> str:
    """Gamma."""
    return text


def test_ordered_lookup_and_membership() -> None:
    toolset = Toolset([alpha, beta, gamma])
    assert toolset.names == ("alpha", "beta", "gamma")
    assert [t.name for t in toolset] == ["alpha", "beta", "gamma"]
    assert len(toolset) == 3
    assert "beta" in toolset
    assert "delta" not in toolset
    assert toolset["gamma"].name == "gamma"
    assert toolset.get("delta") is None
    with pytest.raises(KeyError, match=r"no tool 'delta'; tools: \['alpha', 'beta', 'gamma'\]"):
        toolset["delta"]
    assert "3 tools" in repr(toolset)


def test_add_returns_the_tool_and_accepts_functions_and_tools() -> None:
    toolset = Toolset()
    added = toolset.add(alpha)
    assert isinstance(added, Tool)
    assert toolset.add(added) is added  # the same tool again is a no-op
    assert len(toolset) == 1
    tool = as_tool(gamma)
    assert toolset.add(tool) is tool


def test_duplicate_names_raise() -> None:
    toolset = Toolset([alpha])
    with pytest.raises(DuplicateToolName, match="'alpha' is already in the toolset") as info:
        toolset.add(as_tool(gamma, name="alpha"))
    assert isinstance(info.value, UsageError)
    assert info.value.name == "alpha"
    assert toolset.names == ("alpha",)  # nothing changed
    with pytest.raises(DuplicateToolName):
        Toolset([alpha, as_tool(beta, name="alpha")])


def test_invalid_names_are_rejected() -> None:
    with pytest.raises(InvalidToolName, match="'has space'"):
        Toolset([as_tool(gamma, name="has space")])
    with pytest.raises(InvalidToolName):
        Toolset().add(as_tool(gamma, name="x" * 65))
    assert Toolset([as_tool(gamma, name="x" * 64)]).names == ("x" * 64,)


def test_remove_discard_replace() -> None:
    toolset = Toolset([alpha, beta, gamma])
    removed = toolset.remove("beta")
    assert removed.name == "beta"
    assert toolset.names == ("alpha", "gamma")
    with pytest.raises(UsageError, match=r"cannot remove 'beta': no such tool.*'alpha', 'gamma'"):
        toolset.remove("beta")
    assert toolset.discard("beta") is None
    assert toolset.discard("gamma") is not None
    assert list(toolset) == [toolset["alpha"]]

    new_alpha = as_tool(alpha).with_description("Alpha v2.")
    old = toolset.replace(new_alpha)
    assert old is not None
    assert old.description == "Alpha."
    assert toolset["alpha"] is new_alpha
    assert toolset.replace(as_tool(beta)) is None  # replace adds when missing
    assert toolset.names == ("alpha", "beta")


def test_definitions_are_cached_until_a_change() -> None:
    toolset = Toolset([alpha, beta])
    first = toolset.definitions()
    assert [d.name for d in first] == ["alpha", "beta"]
    assert first[0] == toolset["alpha"].definition()
    assert toolset.definitions() is first
    names = toolset.names
    assert toolset.names is names
    version = toolset.version

    toolset.add(gamma)
    after_add = toolset.definitions()
    assert after_add is not first
    assert [d.name for d in after_add] == ["alpha", "beta", "gamma"]
    assert toolset.names is not names
    assert toolset.version > version

    toolset.remove("alpha")
    after_remove = toolset.definitions()
    assert after_remove is not after_add
    assert [d.name for d in after_remove] == ["beta", "gamma"]

    toolset.replace(as_tool(beta).with_note("Note."))
    after_replace = toolset.definitions()
    assert after_replace is not after_remove
    assert after_replace[0].description == "Beta.\n\nNote."

    same = toolset["gamma"]
    version = toolset.version
    toolset.replace(same)  # replacing a tool by itself changes nothing
    toolset.add(same)
    assert toolset.definitions() is after_replace
    assert toolset.version == version


def test_view_is_read_only_and_live() -> None:
    toolset = Toolset([alpha])
    view = toolset.view()
    with pytest.raises(TypeError):
        view["beta"] = as_tool(beta)  # type: ignore[index]
    toolset.add(beta)
    assert list(view) == ["alpha", "beta"]
    assert view["beta"].name == "beta"


def test_copy_is_independent() -> None:
    toolset = Toolset([alpha, beta])
    toolset.definitions()
    clone = toolset.copy()
    assert clone.names == toolset.names
    clone.add(gamma)
    clone.remove("alpha")
    assert toolset.names == ("alpha", "beta")
    assert [d.name for d in toolset.definitions()] == ["alpha", "beta"]
    assert clone.names == ("beta", "gamma")
    assert [d.name for d in clone.definitions()] == ["beta", "gamma"]
    assert clone["beta"] is toolset["beta"]  # tools are immutable, so they are shared
