"""Renamed public names keep working for a minor version and say what replaced them."""

from __future__ import annotations

import types

import pytest

from harness._deprecation import Renamed, deprecated_getattr, renamed_label

RENAMED = Renamed(
    old="Old", new="OrderedDict", module="collections", since="0.2.0", removal="0.3.0"
)


def test_an_old_name_answers_the_new_object_and_warns_with_both_names() -> None:
    import collections

    getattr_ = deprecated_getattr("pkg", {"Old": RENAMED})
    with pytest.warns(DeprecationWarning, match="pkg.Old is deprecated") as caught:
        assert getattr_("Old") is collections.OrderedDict
    message = str(caught[0].message)
    assert "pkg.Old is deprecated since 0.2.0" in message
    assert "removed in 0.3.0" in message
    assert "use pkg.OrderedDict instead" in message


def test_other_names_go_to_the_fallback_or_raise_attribute_error() -> None:
    getattr_ = deprecated_getattr("pkg", {"Old": RENAMED}, fallback=lambda name: name.upper())
    assert getattr_("other") == "OTHER"
    with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'missing'"):
        deprecated_getattr("pkg", {})("missing")


def test_the_warning_points_at_the_callers_line() -> None:
    module = types.ModuleType("pkg")
    module.__getattr__ = deprecated_getattr("pkg", {"Old": RENAMED})  # type: ignore[method-assign]
    with pytest.warns(DeprecationWarning, match="pkg.Old is deprecated") as caught:
        _ = module.Old
    assert caught[0].filename == __file__


def test_a_renamed_label_is_translated_with_a_warning_and_new_labels_pass_silently() -> None:
    labels = {
        "entity": Renamed(old="entity", new="discovery", module="", since="0.2.0", removal="0.3.0")
    }
    with pytest.warns(DeprecationWarning, match=r"injected\(strategy=\.\.\.\): the label 'entity'"):
        assert renamed_label("entity", labels, "injected(strategy=...)") == "discovery"
    assert renamed_label("discovery", labels, "injected(strategy=...)") == "discovery"
