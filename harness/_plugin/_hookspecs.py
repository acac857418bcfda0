"""Hooks other plugins and ``conftest.py`` files implement to extend harness cassettes.

Registered by the harness pytest plugin in ``pytest_addhooks``. Implement them in a
``conftest.py``::

    def pytest_harness_cassette_matchers(config):
        return {"model_name": lambda r1, r2: model_of(r1) == model_of(r2)}

    def pytest_harness_cassette_scrubbers(config):
        from harness.testing import Scrubber
        return [Scrubber(request=drop_user_field)]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

__all__ = ["pytest_harness_cassette_matchers", "pytest_harness_cassette_scrubbers"]


@pytest.hookspec
def pytest_harness_cassette_matchers(config: pytest.Config) -> Mapping[str, Callable[..., Any]]:
    """Extra vcrpy request matchers, by name, for ``match_on`` lists.

    A matcher takes two ``vcr.request.Request`` objects and returns ``None``/``True``
    when they match, or raises ``AssertionError`` (or returns ``False``) when not.
    Every implementation's mapping is merged; later plugins win on a name clash.
    """
    raise NotImplementedError


@pytest.hookspec
def pytest_harness_cassette_scrubbers(config: pytest.Config) -> Sequence[Any]:
    """Extra scrubbers (``harness.testing.Scrubber``) run before a cassette is written.

    They run after the built-in credential-header scrubbing, in plugin order.
    """
    raise NotImplementedError
