"""The API check: the working tree against the last release's API file, and the rules it
applies (what breaks, what a deprecated alias or a breaking fragment excuses)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import griffe
import pytest
from api_check import (
    ROOT,
    Entry,
    announced,
    check,
    compare,
    describe,
    latest_release,
    rebuild,
)


def test_the_working_tree_breaks_nothing_unannounced_since_the_last_release() -> None:
    report = check()
    assert report.unannounced == [], report.explain()


def test_the_newest_api_file_is_found_by_version_number(tmp_path: Path) -> None:
    for name in ("0.9.0.json", "0.10.0.json", "0.2.1.json", "notes.json"):
        (tmp_path / name).write_text("{}", encoding="utf-8")
    assert latest_release(tmp_path).name == "0.10.0.json"
    with pytest.raises(FileNotFoundError, match="no API file of a release"):
        latest_release(tmp_path / "empty")


def _release(**entries: Entry) -> dict[str, Any]:
    return {"release": "0.1.0", "packages": {"pkg": entries}}


def _now(deprecated: dict[str, Entry | None] | None = None, **entries: Entry) -> dict[str, Any]:
    return {"packages": {"pkg": entries}, "deprecated": deprecated or {}}


def _fn(*signature: str) -> Entry:
    return {"kind": "function", "signature": list(signature)}


def test_a_removed_name_fails_unless_a_breaking_fragment_names_it() -> None:
    old = _release(run=_fn("model"), gone=_fn())
    report = compare(old, _now(run=_fn("model")), set())
    assert [str(p) for p in report.unannounced] == ["pkg.gone: public object was removed"]
    report = compare(old, _now(run=_fn("model")), {"pkg.gone"})
    assert report.unannounced == []
    assert [p.path for p in report.announced] == ["pkg.gone"]


def test_naming_the_package_announces_nothing_in_it() -> None:
    report = compare(_release(gone=_fn()), _now(), {"pkg"})
    assert [p.path for p in report.unannounced] == ["pkg.gone"]


def test_a_deprecated_alias_keeps_the_name_with_the_signature_it_stands_for() -> None:
    old = _release(ParamSpec=_fn("name", "kind=None"))
    kept = compare(old, _now({"pkg.ParamSpec": _fn("name", "kind=None")}), set())
    assert kept.unannounced == [] and kept.kept == ["pkg.ParamSpec"]
    narrowed = compare(old, _now({"pkg.ParamSpec": _fn("kind=None")}), set())
    assert "pkg.ParamSpec: parameter was removed: name" in [str(p) for p in narrowed.unannounced]


@pytest.mark.parametrize(
    ("before", "after", "problems"),
    [
        (["a", "b"], ["b", "a"], ["positional parameter was moved: a", "positional parameter"]),
        (["a", "b=1"], ["a"], ["parameter was removed: b"]),
        (["a", "b=1"], ["a", "b"], ["parameter is now required: b"]),
        (["a"], ["a", "b"], ["parameter was added as required: b"]),
        (["a", "b"], ["a", "*", "b"], ["parameter kind was changed: b"]),
        (["*", "a=1", "b=2"], ["*", "b=2", "a=1"], []),  # keyword-only order is free
        (["a", "*", "b=1"], ["a", "*", "b=1", "c=2"], []),  # an optional parameter added
        (["a", "b=1"], ["a", "*args", "**kwargs"], []),  # swallowed by *args, **kwargs
    ],
)
def test_parameter_changes_that_break_a_caller_fail(
    before: list[str], after: list[str], problems: list[str]
) -> None:
    report = compare(_release(f=_fn(*before)), _now(f=_fn(*after)), set())
    found = [p.what for p in report.unannounced]
    assert len(found) == len(problems)
    for what, wanted in zip(found, problems, strict=True):
        assert what.startswith(wanted)


def test_a_changed_default_is_a_note_not_a_failure() -> None:
    report = compare(_release(f=_fn("a=1")), _now(f=_fn("a=2")), set())
    assert report.unannounced == []
    assert [str(p) for p in report.notes] == ["pkg.f: parameter default was changed: a"]


def test_a_class_member_or_constructor_parameter_removed_fails_and_the_class_announces_it() -> None:
    old_class: Entry = {
        "kind": "class",
        "signature": ["*", "name", "kind=None"],
        "members": {"to_data": _fn(), "name": {"kind": "attribute"}},
    }
    new_class: Entry = {"kind": "class", "signature": ["*", "name"], "members": {"name": {}}}
    new_class["members"]["name"] = {"kind": "attribute"}
    report = compare(_release(Spec=old_class), _now(Spec=new_class), set())
    assert sorted(str(p) for p in report.unannounced) == [
        "pkg.Spec.__init__: parameter was removed: kind",
        "pkg.Spec.to_data: public object was removed",
    ]
    assert compare(_release(Spec=old_class), _now(Spec=new_class), {"pkg.Spec"}).unannounced == []


def test_a_name_that_changed_kind_fails() -> None:
    report = compare(_release(f=_fn()), _now(f={"kind": "attribute"}), set())
    assert [p.what for p in report.unannounced] == [
        "public object points to a different kind of object"
    ]


def test_breaking_fragments_announce_the_paths_they_quote(tmp_path: Path) -> None:
    (tmp_path / "30.breaking.1.md").write_text(
        "`harness.fuzz.PROFILES` is gone; `harness.run(model, prompt)` takes `tools` last.",
        encoding="utf-8",
    )
    (tmp_path / "31.changed.1.md").write_text("`harness.changed_only`", encoding="utf-8")
    assert announced(tmp_path) == {"harness.fuzz.PROFILES", "harness.run", "tools"}


def test_signatures_survive_the_round_trip_through_the_file() -> None:
    code = "def f(a, /, b, *args, c, d=1, **kw): ...\ndef g(a, *, b=None): ...\n"
    with griffe.temporary_visited_module(code) as module:
        f, g = describe(module["f"]), describe(module["g"])
        assert f["signature"] == ["a", "/", "b", "*args", "c", "d=1", "**kw"]
        assert g["signature"] == ["a", "*", "b=None"]
        rebuilt = rebuild("pkg", {"f": f, "g": g})
        for name in ("f", "g"):
            original, back = module[name].parameters, rebuilt[name].parameters
            assert [(p.name, p.kind) for p in back] == [(p.name, p.kind) for p in original]


def _scratch(tmp_path: Path) -> Path:
    """A copy of the package, the API files and no fragments: a tree to break."""
    root = tmp_path / "tree"
    shutil.copytree(
        ROOT / "harness", root / "harness", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(ROOT / "api", root / "api")
    (root / "changes").mkdir()
    return root


def _rename(root: Path, old: str, new: str) -> None:
    """Rename the playbook condition ``old`` everywhere in ``harness.injection``."""
    for path in (root / "harness" / "injection").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.mark.slow
def test_a_public_rename_fails_the_check_until_an_alias_or_a_fragment_covers_it(
    tmp_path: Path,
) -> None:
    root = _scratch(tmp_path)
    _rename(root, "called_any", "called_some")
    report = check(root)
    assert [str(p) for p in report.unannounced] == [
        "harness.injection.called_any: public object was removed"
    ]
    assert "harness.injection.called_any: public object was removed" in report.explain()

    (root / "changes" / "35.breaking.1.md").write_text(
        "`harness.injection.called_any` is `called_some` now.", encoding="utf-8"
    )
    assert check(root).unannounced == []

    (root / "changes" / "35.breaking.1.md").unlink()
    init = root / "harness" / "injection" / "__init__.py"
    alias = (
        "\nfrom harness._deprecation import Renamed as _Renamed, deprecated_getattr as _alias\n"
        "__getattr__ = _alias('harness.injection', {'called_any': _Renamed(old='called_any', "
        "new='called_some', module='harness.injection', since='0.2.0', removal='0.3.0')}, "
        "fallback=__getattr__)\n"
    )
    init.write_text(init.read_text(encoding="utf-8") + alias, encoding="utf-8")
    report = check(root)
    assert report.unannounced == []
    assert "harness.injection.called_any" in report.kept
