"""Errors of the cassette layer: unreadable files, requests that do not match, running out."""

from __future__ import annotations

from harness._errors import HarnessError, UsageError

__all__ = ["CassetteError", "CassetteExhausted", "CassetteMismatch", "CassetteUnused"]


class CassetteError(UsageError):
    """A cassette file cannot be read or used: the message names the file and the problem."""


class CassetteMismatch(HarnessError):
    """A request differs from the recorded one: names the cassette, the request number and
    the closest recorded request, with a readable diff."""


class CassetteExhausted(HarnessError):
    """A request was made after every recorded interaction was played."""


class CassetteUnused(HarnessError):
    """A test ended with recorded interactions that no request used."""
