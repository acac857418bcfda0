"""Reading YAML files written by others: bounded size, depth and alias expansion.

Scenario files, comparison files and price files (``harness.cost``) are read here, at
the bottom, so that neither of those packages reads YAML through the other.

A 1 KB file of nested aliases (the "billion laughs") expands to a billion values once
something walks it; 20,000 nested brackets exhaust the parser's recursion. Both, and a
file that is not UTF-8, become a ``ScenarioError`` naming the file and the limit. A key
given twice in one mapping (YAML keeps the last one silently) is refused too, naming
the key and both lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from harness._errors import ScenarioError

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "MAX_NODES", "parse_yaml", "read_yaml"]

MAX_FILE_BYTES = 1024 * 1024
"""Largest scenario file read (1 MiB)."""
MAX_DEPTH = 64
"""Deepest nesting of mappings and lists."""
MAX_NODES = 100_000
"""Most values in the document once aliases are expanded."""


def read_yaml(file: Path, *, what: str) -> Any:
    """The YAML document in ``file``, within the limits above."""
    name = f"{what} {str(file)!r}"
    try:
        with file.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ScenarioError(f"cannot read {name}: {exc.strerror}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ScenarioError(
            f"{name} is larger than {MAX_FILE_BYTES} bytes (MAX_FILE_BYTES); split it into "
            "several scenarios"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(
            f"{name} is not UTF-8 (byte {raw[exc.start]:#04x} at offset {exc.start}); "
            "save it as UTF-8"
        ) from None
    return parse_yaml(text, name=name)


def parse_yaml(text: str, *, name: str) -> Any:
    """Parse ``text`` safely (``yaml.SafeLoader``) within the depth and expansion limits."""
    loader = yaml.SafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise ScenarioError(
                f"{name} is nested more than {MAX_DEPTH} levels deep (MAX_DEPTH)"
            ) from None
        except yaml.YAMLError as exc:
            raise ScenarioError(f"{name} is not valid YAML: {exc}") from None
        if node is None:
            return None
        _check(node, name)
        try:
            return loader.construct_document(node)
        except yaml.YAMLError as exc:
            raise ScenarioError(f"{name} is not valid YAML: {exc}") from None
    finally:
        loader.dispose()


def _check(root: yaml.Node, name: str) -> None:
    """Refuse documents nested deeper than MAX_DEPTH or expanding past MAX_NODES values.

    Sizes are computed once per node (aliases share nodes), so the check is linear in
    the file even when the expansion is exponential.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()

    def size(node: yaml.Node, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise ScenarioError(f"{name} is nested more than {MAX_DEPTH} levels deep (MAX_DEPTH)")
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in on_path:  # a recursive alias: construct would build a cyclic value
            raise ScenarioError(f"{name} has an alias that refers to itself; remove the cycle")
        on_path.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            for item in node.value:
                total += size(item, depth + 1)
        elif isinstance(node, yaml.MappingNode):
            _check_keys(node, name)
            for k, v in node.value:
                total += size(k, depth + 1) + size(v, depth + 1)
        on_path.discard(key)
        if total > MAX_NODES:
            raise ScenarioError(
                f"{name} expands to more than {MAX_NODES} values (MAX_NODES); YAML aliases "
                "(*name) repeat their anchor's content: use fewer or smaller ones"
            )
        sizes[key] = total
        return total

    size(root, 0)


_MERGE = "tag:yaml.org,2002:merge"


def _check_keys(node: yaml.MappingNode, name: str) -> None:
    """Refuse a mapping that gives one key twice, naming the key and both lines."""
    seen: dict[tuple[str, str], yaml.Node] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE:
            continue
        first = seen.setdefault((key.tag, key.value), key)
        if first is not key:
            raise ScenarioError(
                f"{name} gives the key {key.value!r} twice in one mapping (lines "
                f"{first.start_mark.line + 1} and {key.start_mark.line + 1}); YAML would "
                "keep only the last one: remove or rename one"
            )
