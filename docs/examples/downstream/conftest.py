"""Project-wide harness settings for the bookshop tests."""

from __future__ import annotations

import pytest

from harness.testing import HarnessConfig


@pytest.fixture
def harness_config() -> HarnessConfig:
    # Cassettes live next to the tests; the network stays closed (the default).
    return HarnessConfig(cassette_dir="tests/cassettes", match_on=["method", "path"])
