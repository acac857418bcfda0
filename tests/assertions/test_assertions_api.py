"""The public API of harness.assertions and harness.testing is exactly their ``__all__``."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("name", ["harness.assertions", "harness.testing"])
def test_exports(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(exported) == len(set(exported))
    assert [n for n in exported if not hasattr(module, n)] == []
    assert set(exported) <= set(dir(module))
    public = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and not isinstance(value, type(importlib))
        and getattr(value, "__module__", name).startswith("harness")
    }
    assert public - set(exported) == set()


def test_lazy_modules_reject_unknown_names() -> None:
    import harness
    import harness.testing

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        harness.testing.nope  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        harness.nope  # noqa: B018
    assert "run" in dir(harness)
