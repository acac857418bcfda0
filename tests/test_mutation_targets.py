"""The mutation-testing table (mutation/run.py) stays true to the tree.

The campaign itself is a manual job (docs/contributing.md); these checks are
cheap and need no cosmic-ray: every critical module is mapped, every mapped
source and test file exists, and annotation mutants are recognised.
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
CRITICAL = {
    "harness/loop/_core.py",
    "harness/loop/_trace_builder.py",
    "harness/loop/_calls.py",
    "harness/loop/_phases.py",
    "harness/loop/_completions.py",
    "harness/loop/_ledger.py",
    "harness/tools/_completion.py",
    "harness/tools/_inject.py",
    "harness/models/_openai/_fast.py",
    "harness/models/_wire/_decode.py",
    "harness/loop/_execution.py",
    "harness/injection/_discovery.py",
    "harness/injection/_facade.py",
    "harness/injection/_playbook.py",
    "harness/injection/_state_machine.py",
    "harness/testing/_scrub.py",
    "harness/_secrets.py",
    "harness/testing/_network.py",
    "harness/formats/_openai.py",
    "harness/formats/anthropic_messages/_validation.py",
    *(p.relative_to(ROOT).as_posix() for p in (ROOT / "harness/injection").glob("_sections*.py")),
}


@pytest.fixture(scope="module")
def run() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_run", ROOT / "mutation" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_every_critical_module_is_mapped_once(run: ModuleType) -> None:
    sources = [s for target in run.TARGETS.values() for s in target.sources]
    assert len(sources) == len(set(sources)), "a source belongs to one module only"
    assert set(sources) == CRITICAL


def test_every_mapped_file_exists_and_tests_are_test_files(run: ModuleType) -> None:
    for name, target in run.TARGETS.items():
        assert target.tests, name
        for path in (*target.sources, *target.tests):
            assert (ROOT / path).is_file(), f"{name}: {path} is missing"
        assert all(Path(t).name.startswith("test_") for t in target.tests), name
        assert set(target.runtime_annotations) <= set(target.sources), name


def test_the_test_command_stops_at_the_first_failure_and_writes_no_bytecode(
    run: ModuleType,
) -> None:
    target = run.TARGETS["discovery"]
    args = shlex.split(run.test_command(target))
    assert args[:4] == [sys.executable, "-B", "-m", "pytest"]
    assert "-x" in args and args[-len(target.tests) :] == list(target.tests)


def test_annotation_lines_cover_signatures_and_annotated_assignments(
    run: ModuleType, tmp_path: Path
) -> None:
    source = tmp_path / "sample.py"
    source.write_text(
        textwrap.dedent(
            """\
            from __future__ import annotations

            def f(a: int | None,
                  *rest: str, key: bytes = b"", **more: float) -> list[
                int
            ]:
                value: dict[str, int] = {}
                return [a or 0 + len(value)]
            """
        ),
        encoding="utf-8",
    )
    spans = run._annotation_spans(source)
    inside = [(3, 9), (3, 16), (4, 13), (4, 23), (4, 45), (5, 4), (6, 0), (7, 11)]
    outside = [(3, 4), (4, 31), (6, 1), (7, 4), (7, 28), (8, 11)]
    assert all(run.in_annotation(p, spans) for p in inside)
    assert not any(run.in_annotation(p, spans) for p in outside)
