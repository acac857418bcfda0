"""``harness.fuzz`` is two products, your agent and generated universes, plus what they share.

``harness/fuzz/agent/`` fuzzes a user's agent, ``harness/fuzz/universe/`` fuzzes injection
strategies in generated tool universes; the private modules directly in ``harness/fuzz/``
(``_watchdog``, ``_ray``, ``_profiles``, ``_loop_options``, ``_scenario_file``) are what
both use. Neither product imports the other, the shared modules import neither, and the
public module ``harness.fuzz`` exports exactly the names listed here (as hypothesis pins
``hypothesis.strategies``).
"""

from __future__ import annotations
import __future__

import importlib
import types
from pathlib import Path

import pytest
from test_layers import PACKAGE, imported_modules, module_name

from harness._lazy import exported_names

FUZZ = PACKAGE / "fuzz"
PRODUCTS = ("harness.fuzz.agent", "harness.fuzz.universe")


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _sources(package: str) -> list[Path]:
    return sorted(PACKAGE.parent.joinpath(*package.split(".")).rglob("*.py"))


@pytest.mark.parametrize("product", PRODUCTS)
def test_a_product_imports_nothing_of_the_other_nor_the_public_module(product: str) -> None:
    """What both need lives in a shared module; the public module imports the products,
    so a product importing it would reach the other product through it."""
    (other,) = (p for p in PRODUCTS if p != product)
    crossing = {
        module_name(path): sorted(
            m for m in imported_modules(path) if _within(m, other) or m == "harness.fuzz"
        )
        for path in _sources(product)
    }
    assert {name: found for name, found in crossing.items() if found} == {}


def test_the_shared_modules_import_neither_product() -> None:
    shared = sorted(p for p in FUZZ.glob("_*.py") if p.name != "__init__.py")
    assert {module_name(p) for p in shared} >= {"harness.fuzz._watchdog", "harness.fuzz._ray"}
    crossing = {
        module_name(path): sorted(
            m for m in imported_modules(path) if any(_within(m, p) for p in PRODUCTS)
        )
        for path in shared
    }
    assert {name: found for name, found in crossing.items() if found} == {}


def test_the_products_hold_only_private_modules() -> None:
    """Their ``__init__`` exports nothing: ``harness.fuzz`` is the one public module."""
    for product in PRODUCTS:
        package = importlib.import_module(product)
        public = [n for n in vars(package) if n.isidentifier() and not n.startswith("_")]
        assert public == [], product  # (pytest's rewriting adds names like @py_builtins)
        modules = [p.stem for p in _sources(product) if p.stem != "__init__"]
        assert modules and all(m.startswith("_") for m in modules), (product, modules)


SHARED = {"FUZZ_DEFAULTS", "PROFILE_ENV", "WATCHDOG_SECONDS"}
AGENT = {
    "AGENT_PROFILES",
    "AgentFuzzReport",
    "Finding",
    "FuzzedRun",
    "Guidance",
    "agent_runs",
    "fuzz_agent",
    "no_timeouts",
}
UNIVERSE = {
    "BuiltUniverse",
    "CampaignConfig",
    "CampaignReport",
    "DATABASE_ENV",
    "DECISION_KINDS",
    "DecisionModel",
    "FAULTS",
    "FacadeSpec",
    "FuzzDecision",
    "FuzzOutcome",
    "FuzzProviderSpec",
    "FuzzScenario",
    "FuzzToolSpec",
    "GroupSpec",
    "MachineSpec",
    "HYPOTHESIS_PROFILES",
    "PROFILE_PREFIX",
    "FuzzParamSpec",
    "PlaybookSpec",
    "SECRET",
    "SectionSpec",
    "StrategyFactory",
    "UNIVERSE_KINDS",
    "UNKNOWN_TOOL",
    "UniverseSpec",
    "UnlockSpec",
    "build_universe",
    "check_determinism",
    "check_restart_equivalence",
    "counterexample_data",
    "decisions",
    "example_arguments",
    "fuzz_scenarios",
    "load_profile",
    "load_strategy",
    "loop_core_machine",
    "run_campaign",
    "run_fuzz_scenario",
    "static_tools_model",
    "tool_specs",
    "tool_universes",
    "universe_strategies",
    "universe_tools",
    "write_counterexample",
}


def test_all_is_exactly_the_two_products_and_what_they_share() -> None:
    import harness.fuzz

    assert not (AGENT & UNIVERSE or AGENT & SHARED or UNIVERSE & SHARED)
    assert sorted(harness.fuzz.__all__) == sorted(AGENT | UNIVERSE | SHARED)
    declared = exported_names(FUZZ / "__init__.py")
    homes = {"harness.fuzz.agent.": AGENT, "harness.fuzz.universe.": UNIVERSE}
    for name, module in declared.items():
        home = next((names for prefix, names in homes.items() if module.startswith(prefix)), None)
        assert name in (SHARED if home is None else home), (name, module)
    for name in SHARED:
        assert declared[name].startswith("harness.fuzz._"), (name, declared[name])


def test_the_public_module_has_no_public_name_beyond_all() -> None:
    """Every name ``harness.fuzz`` holds once each export is loaded is in ``__all__``
    (the check hypothesis runs on ``hypothesis.strategies``)."""
    import harness.fuzz

    for name in harness.fuzz.__all__:
        getattr(harness.fuzz, name)
    public = {
        name
        for name, value in vars(harness.fuzz).items()
        if not name.startswith("_")
        and not isinstance(value, (types.ModuleType, __future__._Feature))
    }
    assert public == set(harness.fuzz.__all__)
    assert set(dir(harness.fuzz)) >= public


RENAMED = [("ParamSpec", "FuzzParamSpec"), ("PROFILES", "HYPOTHESIS_PROFILES")]


@pytest.mark.parametrize(("old", "new"), RENAMED)
def test_a_renamed_name_answers_the_new_one_and_warns(old: str, new: str) -> None:
    import harness.fuzz

    with pytest.warns(
        DeprecationWarning,
        match=rf"harness\.fuzz\.{old} is deprecated since 0\.2\.0 and will be removed in "
        rf"0\.3\.0: use harness\.fuzz\.{new} instead",
    ):
        value = getattr(harness.fuzz, old)
    assert value is getattr(harness.fuzz, new)
    assert old not in harness.fuzz.__all__ and old not in dir(harness.fuzz)


def test_the_old_names_still_build_tools_and_select_settings() -> None:
    from harness.fuzz import FuzzToolSpec

    with pytest.warns(DeprecationWarning, match="ParamSpec"):
        from harness.fuzz import ParamSpec
    spec = FuzzToolSpec(name="t", params=[ParamSpec(name="n", type="integer")])
    assert spec.parameters()["properties"] == {"n": {"type": "integer"}}
    with pytest.warns(DeprecationWarning, match="PROFILES"):
        from harness.fuzz import PROFILES
    assert PROFILES["ci"].derandomize and PROFILES["ci"].max_examples == 60


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    import harness.fuzz

    with pytest.raises(AttributeError, match=r"module 'harness\.fuzz' has no attribute 'Nope'"):
        harness.fuzz.Nope  # noqa: B018
