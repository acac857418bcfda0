"""How a message names things (private, layer 0, stdlib only): a long list of names
shortened (``format_names``) and the "did you mean" hint (``close_matches``,
``did_you_mean``). Errors use it too, so it imports nothing of the package."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["NAMES_SHOWN", "close_matches", "did_you_mean", "format_names"]

NAMES_SHOWN = 20
"""How many names a message lists before it says "and N more"."""


def format_names(
    names: Iterable[str], *, limit: int = NAMES_SHOWN, quote: bool = True, empty: str = "(none)"
) -> str:
    """``'a', 'b', 'c' and 4 more``: the one way a message lists names."""
    items = list(names)
    if not items:
        return empty
    shown = [repr(n) if quote else n for n in items[:limit]]
    text = ", ".join(shown)
    if len(items) > limit:
        text += f" and {len(items) - limit} more"
    return text


def close_matches(
    name: str, candidates: Iterable[str], *, n: int = 3, cutoff: float = 0.6
) -> list[str]:
    """The candidates closest to ``name`` (best first; case-insensitive), at most ``n``,
    each at least ``cutoff`` similar (``difflib`` ratio)."""
    pool = list(dict.fromkeys(candidates))
    by_lower: dict[str, str] = {}
    for candidate in pool:
        by_lower.setdefault(candidate.lower(), candidate)
    found = difflib.get_close_matches(name.lower(), list(by_lower), n=n, cutoff=cutoff)
    return [by_lower[match] for match in found]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or ``""`` when none is close."""
    found = close_matches(name, candidates)
    if not found:
        return ""
    return f" (did you mean {found[0]!r}?)"
