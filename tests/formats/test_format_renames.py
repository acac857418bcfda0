"""Renamed names of ``harness.formats`` keep working for a minor version, with a warning."""

from __future__ import annotations

from typing import get_args

import pytest

import harness
import harness.formats
from harness.models import OpenAIWireTransport, ScriptedModel


def test_profile_is_strictness_and_warns_with_the_new_name() -> None:
    with pytest.warns(
        DeprecationWarning,
        match=r"harness\.formats\.Profile is deprecated since "
        r"0\.2\.0 and will be removed in 0\.3\.0: use harness\.formats\.Strictness",
    ):
        old = harness.formats.Profile  # type: ignore[attr-defined]
    assert old is harness.formats.Strictness
    assert get_args(harness.formats.Strictness) == ("default", "strict")
    assert "Profile" not in harness.formats.__all__ and "Strictness" in harness.formats.__all__


def test_the_from_import_spelling_warns_too() -> None:
    with pytest.warns(DeprecationWarning, match="use harness.formats.Strictness"):
        from harness.formats import Profile  # type: ignore[attr-defined]  # noqa: F401


def test_the_fake_still_takes_a_strictness_as_its_profile() -> None:
    transport = OpenAIWireTransport(ScriptedModel([]), profile="strict")
    assert transport.app.profile == "strict"
    with pytest.raises(harness.UsageError, match="profile"):
        OpenAIWireTransport(ScriptedModel([]), profile="lenient")  # type: ignore[arg-type]
