"""Comparisons: one task, several ways of injecting its tools, and what each costs.

```yaml
name: large_catalog
description: The same task with 300 tools, offered five ways.
format: openai-responses          # whose prompt cache applies (harness.cost.FORMATS)
model: gpt-5                      # optional: minimum cacheable length, tokenizer, prices
task:                             # what every variant shares (any scenario field)
  prompt: Find invoice INV-7 and email its total to ACME.
  expect: {output: Invoice INV-7 is 120 EUR; ACME was emailed.}
variants:
  - name: eager
    tools: [fixtures.catalog:catalog_tools()]
    model: {steps: [...]}
  - name: native                  # deferred behind the provider's tool search
    strategies: [{tool_search: {tools: [fixtures.catalog:catalog_tools()], search: hosted}}]
    model: {steps: [...]}
  - name: later                   # a variant that cannot run yet
    pending: needs a feature not built yet
```

Each variant is the task with the variant's fields laid over it (a ``name``, a
``description``, then any scenario field; ``expect`` is merged key by key), run as an
ordinary scenario with its requests recorded, and judged by ``harness.cost``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness._errors import HarnessError, ScenarioError
from harness._safe_yaml import read_yaml
from harness.cost import CostReport, PriceTable, analyse, record_requests
from harness.cost._rules import FormatName
from harness.scenarios._loader import Scenario
from harness.scenarios._runner import ScenarioOutcome, run_scenario
from harness.scenarios._spec import ScenarioSpec

__all__ = [
    "ComparisonResult",
    "ComparisonSpec",
    "VariantResult",
    "is_comparison",
    "load_comparison",
    "run_comparison",
]

_VARIANT_KEYS = frozenset({"name", "description", "pending"})


class ComparisonSpec(BaseModel):
    """One comparison file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    format: FormatName = "openai-chat"
    """The wire format whose cache rules apply (``openai-chat``, ``openai-responses``,
    ``anthropic-messages``)."""
    model: str | None = None
    """The model name: minimum cacheable length, exact tokenizer, price."""
    automatic: bool = True
    """Anthropic: the requests ask for automatic caching (a breakpoint after the last block)."""
    task: dict[str, Any] = Field(default_factory=dict)
    """Scenario fields every variant shares."""
    variants: list[dict[str, Any]]
    """Each variant: ``name``, ``description``, ``pending`` (a reason it cannot run yet),
    and scenario fields laid over the task."""


@dataclasses.dataclass(frozen=True)
class Comparison:
    """A loaded comparison: its spec, where it came from, and each variant's scenario."""

    spec: ComparisonSpec
    path: Path | None
    variants: tuple[tuple[str, str, Scenario | None, str | None], ...]
    """``(name, description, scenario, pending reason)``; a pending one has no scenario."""

    @property
    def name(self) -> str:
        """The comparison's name."""
        return self.spec.name


@dataclasses.dataclass(frozen=True, kw_only=True)
class VariantResult:
    """One variant's run and what its requests cost."""

    name: str
    description: str
    passed: bool
    problem: str | None
    report: CostReport
    calls: int
    cost: float | None
    outcome: ScenarioOutcome

    def to_data(self) -> dict[str, Any]:
        """The ``harness compare --json`` entry of the variant."""
        report = self.report
        return {
            "name": self.name,
            "passed": self.passed,
            "requests": len(report.requests),
            "calls": self.calls,
            "tool_definition_tokens": report.tool_definition_tokens,
            "input_tokens": report.input_tokens,
            "cached_input_tokens": report.cached_tokens,
            "cache_breaks": [b.to_data() for b in report.breaks],
            "cost": self.cost,
        }


@dataclasses.dataclass(frozen=True, kw_only=True)
class ComparisonResult:
    """Every variant of a comparison, run and costed."""

    comparison: Comparison
    variants: tuple[VariantResult, ...]
    pending: tuple[tuple[str, str], ...] = ()
    """Variants that did not run: ``(name, reason)``."""

    @property
    def passed(self) -> bool:
        """Every variant that ran reached the task's goal."""
        return all(v.passed for v in self.variants)

    def to_data(self) -> dict[str, Any]:
        """``{"scenario": str, "variants": [...]}``: the ``--json`` contract (docs/cost.md)."""
        return {
            "scenario": self.comparison.name,
            "variants": [v.to_data() for v in self.variants],
        }


def is_comparison(path: str | Path) -> bool:
    """True for a comparison file (a top-level ``variants:`` key), read as text only."""
    try:
        with Path(path).open(encoding="utf-8") as handle:
            return any(line.startswith("variants:") for line in handle)
    except (OSError, UnicodeDecodeError):
        return False


def _merged(task: Mapping[str, Any], variant: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(task)
    for key, value in variant.items():
        if key in _VARIANT_KEYS:
            continue
        if key == "expect" and isinstance(value, Mapping) and isinstance(task.get(key), Mapping):
            merged[key] = {**task[key], **value}
        else:
            merged[key] = value
    return merged


def _problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors(include_url=False)
    )


def load_comparison(path: str | Path) -> Comparison:
    """Read and check a comparison file: every variant must be a valid scenario."""
    file = Path(path)
    data = read_yaml(file, what="comparison file")
    where = f"comparison file {str(file)!r}"
    if not isinstance(data, dict):
        raise ScenarioError(f"{where} must hold a mapping, got {type(data).__name__}")
    data.setdefault("name", file.stem)
    try:
        spec = ComparisonSpec.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(f"{where} is invalid: {_problems(exc)}") from None
    if not spec.variants:
        raise ScenarioError(f"{where} has no variants; give at least one under 'variants:'")
    variants: list[tuple[str, str, Scenario | None, str | None]] = []
    seen: set[str] = set()
    for index, variant in enumerate(spec.variants, 1):
        name = variant.get("name")
        if not isinstance(name, str) or not name:
            raise ScenarioError(f"{where}: variant {index} needs a 'name'")
        if name in seen:
            raise ScenarioError(f"{where}: two variants are named {name!r}")
        seen.add(name)
        description = str(variant.get("description") or "")
        pending = variant.get("pending")
        if pending is not None:
            variants.append((name, description, None, str(pending)))
            continue
        fields = _merged(spec.task, variant)
        model = fields.get("model")
        if isinstance(model, Mapping) and "capabilities" not in model:
            # the model stands for the provider whose cache is priced: its native tools
            fields["model"] = {**model, "capabilities": spec.format}
        fields["name"] = f"{spec.name}:{name}"
        fields.setdefault("description", description)
        try:
            scenario_spec = ScenarioSpec.model_validate(fields)
        except ValidationError as exc:
            raise ScenarioError(f"{where}: variant {name!r} is invalid: {_problems(exc)}") from None
        variants.append((name, description, Scenario(spec=scenario_spec, path=file), None))
    return Comparison(spec=spec, path=file, variants=tuple(variants))


def _run_variant(
    comparison: Comparison,
    name: str,
    description: str,
    scenario: Scenario,
    prices: PriceTable | None,
) -> VariantResult:
    spec = comparison.spec
    with record_requests() as log:
        try:
            outcome = run_scenario(scenario)
        except HarnessError as exc:
            outcome = ScenarioOutcome(
                scenario=scenario, passed=False, rows=[], problem=str(exc), error=exc
            )
    report = analyse(log, format=spec.format, model=spec.model, automatic=spec.automatic)
    traces = report.traces or ((outcome.trace,) if outcome.trace is not None else ())
    return VariantResult(
        name=name,
        description=description,
        passed=outcome.passed,
        problem=outcome.problem,
        report=report,
        calls=sum(len(t.calls) for t in traces),
        cost=report.cost(prices) if prices is not None else None,
        outcome=outcome,
    )


def run_comparison(
    comparison: Comparison | str | Path, *, prices: PriceTable | None = None
) -> ComparisonResult:
    """Run every variant that can run and cost its requests (``prices``: the price table;
    without it the costs are ``None``)."""
    loaded = comparison if isinstance(comparison, Comparison) else load_comparison(comparison)
    results = []
    pending = []
    for name, description, scenario, reason in loaded.variants:
        if scenario is None:
            pending.append((name, reason or "pending"))
            continue
        results.append(_run_variant(loaded, name, description, scenario, prices))
    return ComparisonResult(comparison=loaded, variants=tuple(results), pending=tuple(pending))
