"""Which settings profile is in effect (``dev``, ``ci``, ``nightly``), for both kinds of fuzzing.

``fuzz_agent`` takes its budget from ``AGENT_PROFILES`` and a campaign its hypothesis
settings from ``HYPOTHESIS_PROFILES``; both pick the profile one way: the one named, else
``$HARNESS_FUZZ_PROFILE``, else ``dev``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from harness._validation import check_choice

__all__ = ["DEFAULT_PROFILE", "PROFILE_ENV", "choose_profile", "profile_in_effect"]

PROFILE_ENV = "HARNESS_FUZZ_PROFILE"
"""Environment variable naming the default settings profile (``dev``, ``ci``, ``nightly``)."""
DEFAULT_PROFILE = "dev"
"""The profile when none is named and ``$HARNESS_FUZZ_PROFILE`` is unset."""


def profile_in_effect(name: str | None) -> str:
    """``name``, else ``$HARNESS_FUZZ_PROFILE``, else ``dev`` (not checked)."""
    return name or os.environ.get(PROFILE_ENV) or DEFAULT_PROFILE


def choose_profile(name: str | None, profiles: Iterable[str]) -> str:
    """The profile in effect, checked against ``profiles`` (``UsageError`` listing them)."""
    chosen = profile_in_effect(name)
    check_choice(chosen, tuple(profiles), name=f"profile (or ${PROFILE_ENV})")
    return chosen
