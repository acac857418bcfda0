"""Project-wide recording settings, written as a pytest-recording suite writes them."""

from __future__ import annotations

import pytest


@pytest.fixture
def vcr_config() -> dict[str, object]:
    # the harness reads pytest-recording's fixture: cassettes next to the tests,
    # a custom header scrubbed (credential headers always are)
    return {
        "cassette_library_dir": "tests/cassettes",
        "filter_headers": ["x-team"],
        "match_on": ["method", "path"],
    }
