"""Renamed public names keep working for one minor version, with a warning that says what to use.

The version policy (docs/versioning.md): before 1.0, a minor release may rename or remove
a public name, but only after one minor release in which the old name still works and
warns. Every rename is declared here, once, as a ``Renamed`` record; the package that
owned the old name routes it through ``deprecated_getattr`` (a PEP 562 module
``__getattr__``), and a renamed string label (an assertion's ``strategy=`` value, a
scenario key) goes through ``renamed_label``. Deprecated names are never in ``__all__``.

``deprecated_names()`` lists every old name routed so far (the API check,
``tests/release/api_check.py``, counts them as kept), and ``ToolDictReads`` gives
``ToolDefinition`` the dict reads of the tool entries it replaced.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Renamed",
    "ToolDictReads",
    "deprecated_getattr",
    "deprecated_names",
    "renamed_label",
    "warn_renamed",
]

_ROUTED: dict[str, Mapping[str, Renamed]] = {}
"""The renames of every package that routed its old names through ``deprecated_getattr``."""


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

    _ROUTED[package] = renames

    def __getattr__(name: str) -> Any:
        renamed = renames.get(name)
        if renamed is None:
            if fallback is not None:
                return fallback(name)
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warn_renamed(renamed, f"{package}.")
        return getattr(importlib.import_module(renamed.module), renamed.new)

    return __getattr__


def deprecated_names() -> dict[str, Renamed]:
    """Every old public name routed through ``deprecated_getattr`` by the packages
    imported so far, by its full path (``"harness.injection.called"``)."""
    return {
        f"{package}.{old}": renamed
        for package, renames in _ROUTED.items()
        for old, renamed in renames.items()
    }


def renamed_label(
    value: str, renames: Mapping[str, Renamed], what: str, *, stacklevel: int = 3
) -> str:
    """``value`` itself, or its new spelling (with a ``DeprecationWarning``) when ``value``
    is an old label of ``renames``; ``what`` names the setting (``"injected(strategy=...)"``);
    ``stacklevel`` points the warning at the user's line (3: the caller's caller).
    """
    renamed = renames.get(value)
    if renamed is None:
        return value
    warnings.warn(
        f"{what}: the label {renamed.old!r} is deprecated since {renamed.since} and will be "
        f"removed in {renamed.removal}: write {renamed.new!r}",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return renamed.new


_TOOL_DICT = "0.2.0", "0.3.0"  # since, removal
_TOOL_KEYS = {
    "type": "isinstance(tool, ToolDefinition)",
    "function": "tool.name, tool.description and tool.parameters",
    "name": "tool.name",
    "description": "tool.description",
    "parameters": "tool.parameters",
    "strict": "tool.strict",
}
"""The keys of the tool entries ``ModelRequest.tools`` held before it held
``ToolDefinition``s (``{"type": "function", "function": {"name", "description",
"parameters"}}``, and the flat ``name``/``description``/``parameters``), and what to
read instead."""


class ToolDictReads:
    """Deprecated dict reads on a ``ToolDefinition``: ``tool["function"]["name"]``,
    ``tool["name"]``, ``tool.get("parameters")``, ``"function" in tool``, each with a
    ``DeprecationWarning`` naming the attribute to read instead."""

    __slots__ = ()
    __iter__ = None  # a tool entry was never iterated for its keys: keep iter() a TypeError

    name: str
    description: str | None
    parameters: Mapping[str, Any]
    strict: bool | None

    def _warn(self, key: str) -> None:
        since, removal = _TOOL_DICT
        warnings.warn(
            f"ModelRequest.tools holds ToolDefinition objects, not dicts: tool[{key!r}] is "
            f"deprecated since {since} and will be removed in {removal}: read "
            f"{_TOOL_KEYS[key]} instead",
            DeprecationWarning,
            stacklevel=3,
        )

    def _value(self, key: str) -> Any:
        function: dict[str, Any] = {"name": self.name, "description": self.description}
        function["parameters"] = dict(self.parameters)
        if self.strict is not None:
            function["strict"] = self.strict
        if key == "type":
            return "function"
        if key == "function":
            return function
        return function.get(key)

    def __getitem__(self, key: str) -> Any:
        if key not in _TOOL_KEYS:
            raise KeyError(
                f"{key!r}: ModelRequest.tools holds ToolDefinition objects, not dicts; read "
                "tool.name, tool.description, tool.parameters (and the other fields) instead"
            )
        self._warn(key)
        return self._value(key)

    def get(self, key: str, default: Any = None) -> Any:
        """``tool[key]`` (deprecated), or ``default`` for a key tool entries never had."""
        if key not in _TOOL_KEYS:
            return default
        self._warn(key)
        return self._value(key)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str) or key not in _TOOL_KEYS:
            return False
        self._warn(key)
        return key != "strict" or self.strict is not None
