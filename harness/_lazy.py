"""Lazy re-exports (PEP 562) declared once: the package's ``if TYPE_CHECKING:`` imports.

A lazy package ``__init__`` lists each public name exactly once, as a type-checking
import written ``from harness.x._y import Name as Name`` (the form type checkers read
as a re-export). At run time ``lazy_exports`` reads those imports from the package's
own source and derives the rest: ``__all__``, and a module ``__getattr__`` that
imports a name from its module on first access. Nothing else lists the names, so a
name cannot be exported in one place and forgotten in another. Reading the source
costs about half a millisecond per package, once (``import harness`` stays cheap for
the pytest plugin, which lives in this package).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["exported_names", "lazy_exports"]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def exported_names(init_file: str | Path) -> dict[str, str]:
    """Public name -> the module it is imported from, read from the ``if TYPE_CHECKING:``
    imports of a package ``__init__`` (in source order).

    ``TypeError`` for anything else in that block, or an import not written
    ``Name as Name``: the block is the package's export list and must stay plain.
    """
    path = Path(init_file)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    table: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for statement in node.body:
            if not (
                isinstance(statement, ast.ImportFrom) and statement.module and not statement.level
            ):
                raise TypeError(
                    f"{path}:{statement.lineno}: the TYPE_CHECKING block of a lazy package holds "
                    "only absolute `from module import Name as Name` imports (its export list)"
                )
            for alias in statement.names:
                if alias.asname != alias.name:
                    raise TypeError(
                        f"{path}:{statement.lineno}: write `{alias.name} as {alias.name}` so "
                        "type checkers read it as a re-export"
                    )
                if alias.name in table:
                    raise TypeError(f"{path}:{statement.lineno}: {alias.name!r} is exported twice")
                table[alias.name] = statement.module
    return table


def lazy_exports(
    package: str, init_file: str, namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for ``package``, whose ``__init__`` is
    ``init_file`` and whose globals are ``namespace``.

    A name is imported from its module on first access and cached in ``namespace``;
    ``__all__`` is every name of the ``TYPE_CHECKING`` imports, sorted.
    """
    table = exported_names(init_file)
    public = sorted(table)

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__, public
