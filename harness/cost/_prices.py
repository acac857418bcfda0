"""Prices per million tokens, from a file you pass (nothing is fetched)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness._errors import UsageError
from harness._validation import is_number

__all__ = ["Price", "PriceTable", "load_prices"]

_FIELDS = ("input", "cached_input", "cache_write")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Price:
    """What one model charges per million input tokens."""

    input: float
    """Uncached input tokens."""
    cached_input: float
    """Input tokens read from the cache."""
    cache_write: float
    """Input tokens written to the cache (Anthropic; OpenAI charges none: ``input``)."""

    def of(self, *, uncached: int, cached: int, written: int) -> float:
        """The price of a request's input: ``uncached`` tokens include ``written`` ones."""
        fresh = uncached - written
        return (fresh * self.input + cached * self.cached_input + written * self.cache_write) / 1e6


@dataclasses.dataclass(frozen=True, kw_only=True)
class PriceTable:
    """Prices by model name; a model not named takes the longest name it starts with,
    then ``default``."""

    prices: Mapping[str, Price]

    def for_model(self, model: str | None) -> Price | None:
        """The price of ``model`` (``None`` when the table has none for it)."""
        if model is not None:
            if model in self.prices:
                return self.prices[model]
            starts = [name for name in self.prices if model.startswith(name)]
            if starts:
                return self.prices[max(starts, key=len)]
        return self.prices.get("default")


def _price(name: str, data: Any, where: str) -> Price:
    if not isinstance(data, Mapping) or "input" not in data:
        raise UsageError(
            f"{where}: the price of {name!r} must be a mapping with at least 'input' "
            f"(USD per million tokens), e.g. {{input: 3.0, cached_input: 0.3}}; got {data!r}"
        )
    unknown = sorted(set(data) - set(_FIELDS))
    if unknown:
        raise UsageError(f"{where}: unknown price fields {unknown} for {name!r}; use {_FIELDS}")
    for key, value in data.items():
        if not is_number(value) or not math.isfinite(value) or value < 0:
            raise UsageError(
                f"{where}: {name}.{key} must be a finite number >= 0 (USD per million "
                f"tokens), got {value!r}"
            )
    base = float(data["input"])
    return Price(
        input=base,
        cached_input=float(data.get("cached_input", base)),
        cache_write=float(data.get("cache_write", base)),
    )


def load_prices(source: str | Path | Mapping[str, Any]) -> PriceTable:
    """A price table from a YAML or JSON file (or its data): ``{models: {name: {input,
    cached_input, cache_write}}}``, USD per million tokens."""
    where = "prices"
    data: Any = source
    if isinstance(source, (str, Path)):
        path = Path(source)
        where = f"price file {str(path)!r}"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot read {where}: {exc}") from None
        if path.suffix == ".json":
            try:
                data = json.loads(text)
            except ValueError as exc:
                raise UsageError(f"{where} is not valid JSON: {exc}") from None
        else:
            from harness._safe_yaml import read_yaml

            data = read_yaml(path, what="price file")
    models = data.get("models") if isinstance(data, Mapping) else None
    if not isinstance(models, Mapping) or not models:
        raise UsageError(
            f"{where} must hold 'models': a mapping of model name to prices, e.g. "
            "{models: {claude-sonnet-4-5: {input: 3.0, cached_input: 0.3, cache_write: 3.75}}}"
        )
    return PriceTable(prices={str(k): _price(str(k), v, where) for k, v in models.items()})
