"""Plugin tests run pytest inside pytest with ``pytester`` (enabled by ``-p pytester`` in
the project's pytest ``addopts``).

Heavy modules are imported once here: inline pytester runs drop modules first
imported inside them, which would re-import them for every run.
"""

from __future__ import annotations

import openai  # noqa: F401
import vcr  # type: ignore[import-untyped]  # noqa: F401

import harness.assertions
import harness.cost
import harness.models
import harness.testing
import harness.testing._cassette
import harness.testing._config
import harness.testing._items
import harness.testing._report  # noqa: F401
