"""Renamed public names keep working for one minor version, with a warning that says what to use.

The version policy (docs/versioning.md): before 1.0, a minor release may rename or remove
a public name, but only after one minor release in which the old name still works and
warns. Every rename is declared here, once, as a ``Renamed`` record; the package that
owned the old name routes it through ``deprecated_getattr`` (a PEP 562 module
``__getattr__``), and a renamed string label (an assertion's ``strategy=`` value, a
scenario key) goes through ``renamed_label``. Deprecated names are never in ``__all__``.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Renamed", "deprecated_getattr", "renamed_label", "warn_renamed"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Renamed:
    """One public name that was renamed: where the new one lives and when the old one goes."""

    old: str
    """The name users wrote before (``"ParamSpec"``, or a label such as ``"discovery"``)."""
    new: str
    """The name to write now."""
    module: str
    """The module the new name is imported from (ignored for string labels)."""
    since: str
    """The release that renamed it (the old name warns from this release on)."""
    removal: str
    """The release that removes the old name."""

    def message(self, where: str) -> str:
        """The warning's text: the old and new spelling, ``where`` they live, the removal."""
        return (
            f"{where}{self.old} is deprecated since {self.since} and will be removed in "
            f"{self.removal}: use {where}{self.new} instead"
        )


def warn_renamed(renamed: Renamed, where: str, *, stacklevel: int = 3) -> None:
    """Warn (``DeprecationWarning``) that ``renamed.old`` is ``renamed.new`` now."""
    warnings.warn(renamed.message(where), DeprecationWarning, stacklevel=stacklevel)


def deprecated_getattr(
    package: str,
    renames: Mapping[str, Renamed],
    fallback: Callable[[str], Any] | None = None,
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that answers each old name of ``renames``
    with the new object and a ``DeprecationWarning``; any other name goes to ``fallback``
    (a lazy package's own ``__getattr__``) or raises ``AttributeError``.
    """

    def __getattr__(name: str) -> Any:
        renamed = renames.get(name)
        if renamed is None:
            if fallback is not None:
                return fallback(name)
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warn_renamed(renamed, f"{package}.")
        return getattr(importlib.import_module(renamed.module), renamed.new)

    return __getattr__


def renamed_label(value: str, renames: Mapping[str, Renamed], what: str) -> str:
    """``value`` itself, or its new spelling (with a ``DeprecationWarning``) when ``value``
    is an old label of ``renames``; ``what`` names the setting (``"injected(strategy=...)"``).
    """
    renamed = renames.get(value)
    if renamed is None:
        return value
    warnings.warn(
        f"{what}: the label {renamed.old!r} is deprecated since {renamed.since} and will be "
        f"removed in {renamed.removal}: write {renamed.new!r}",
        DeprecationWarning,
        stacklevel=3,
    )
    return renamed.new
