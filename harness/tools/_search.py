"""Searching tool definitions: BM25 over names and descriptions, and regular expressions.

What a provider's hosted tool search does, done locally: the scripted model and the
wire fakes play a provider's BM25 and regex searches (``search="bm25"`` / ``"regex"``)
with it, and the ``ToolSearch`` strategy's local search tool answers the model with it.

**BM25** is Okapi BM25 with the non-negative idf of Lucene,
``idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))``, and
``score(q, d) = sum over query terms t of idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b *
|d| / avgdl))`` with ``k1 = 1.5`` and ``b = 0.75``. A tool's document is the tokens of its
name and description; tokens are lower-cased runs of letters and digits, ``snake_case``
and ``camelCase`` names split into words (``get_weatherNow`` -> ``get weather now``).
Ties keep declaration order. ``rank_bm25`` (numpy, unmaintained since 2022) and ``bm25s``
(numpy and scipy) were considered: the index here is a few dozen lines, has no
dependency, and builds a 500-tool index in about a millisecond (see
``benchmarks/tool_search.py``).

**Regex** matches a pattern anywhere in a tool's name or description, case-insensitively,
with the harness's linear-time matcher (a model's pattern cannot hang the loop); a
pattern it cannot run (look-around) falls back to backtracking within one time budget
for the whole search.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from harness.tools._definitions import ToolDefinition
from harness.tools._patterns import pattern_search, time_budget

__all__ = ["BM25Index", "regex_search", "tokens"]

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def tokens(text: str) -> list[str]:
    """Lower-cased words of ``text`` (``snake_case`` and ``camelCase`` split)."""
    return [w.lower() for w in _WORD.findall(text)]


class BM25Index:
    """A BM25 index over tool definitions (built once; ``search`` is a pure read)."""

    __slots__ = ("_avgdl", "_b", "_docs", "_idf", "_k1", "_names")

    def __init__(
        self, definitions: Iterable[ToolDefinition], *, k1: float = 1.5, b: float = 0.75
    ) -> None:
        self._k1, self._b = k1, b
        self._names: list[str] = []
        self._docs: list[tuple[Counter[str], int]] = []
        frequency: Counter[str] = Counter()
        for definition in definitions:
            words = tokens(definition.name) + tokens(definition.description or "")
            counts = Counter(words)
            self._names.append(definition.name)
            self._docs.append((counts, len(words)))
            frequency.update(counts.keys())
        total = len(self._docs)
        self._avgdl = sum(n for _, n in self._docs) / total if total else 0.0
        self._idf = {
            term: math.log(1.0 + (total - df + 0.5) / (df + 0.5)) for term, df in frequency.items()
        }

    def __len__(self) -> int:
        return len(self._names)

    def scores(self, query: str) -> list[float]:
        """The BM25 score of each document for ``query``, in declaration order."""
        terms = [t for t in tokens(query) if t in self._idf]
        k1, b, avgdl = self._k1, self._b, self._avgdl or 1.0
        out = []
        for counts, length in self._docs:
            score = 0.0
            norm = k1 * (1.0 - b + b * length / avgdl)
            for term in terms:
                tf = counts.get(term, 0)
                if tf:
                    score += self._idf[term] * tf * (k1 + 1.0) / (tf + norm)
            out.append(score)
        return out

    def search(self, query: str, limit: int = 5) -> list[str]:
        """The names of the best ``limit`` tools for ``query`` (score above zero)."""
        scored = [(s, i) for i, s in enumerate(self.scores(query)) if s > 0.0]
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        return [self._names[i] for _, i in scored[: max(0, limit)]]


def regex_search(
    definitions: Sequence[ToolDefinition],
    pattern: str,
    limit: int = 5,
    *,
    seconds: float | None = None,
) -> list[str]:
    """Names of the tools whose name or description matches ``pattern`` (anywhere,
    case-insensitively), in declaration order, at most ``limit``.

    The whole search has one time budget (``seconds``; by default the loop's
    ``tool_timeout``, else ``DEFAULT_BUDGET``), however many tools it reads: past it,
    ``PatternTimeout``.
    """
    flagged = pattern if pattern.startswith("(?i)") else f"(?i){pattern}"
    found = []
    with time_budget(seconds):
        for definition in definitions:
            if pattern_search(flagged, definition.name) or pattern_search(
                flagged, definition.description or ""
            ):
                found.append(definition.name)
                if len(found) >= limit:
                    break
    return found
