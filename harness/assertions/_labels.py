"""The strategy labels the assertions accept, and the old spellings that still work.

Before 0.1.0 the harness's own strategies recorded their class names (``EntityDiscovery``,
``StateMachine[OrderState]``); they record short lowercase names now
(docs/pytest-plugin.md#strategy-names). An old label given to ``injected(strategy=...)``,
``removed(strategy=...)``, ``has_events(strategy=...)`` or ``cache_breaks(by=...)`` is
read as the new one, with a ``DeprecationWarning``, until 0.3.0.
"""

from __future__ import annotations

import re

from harness._deprecation import Renamed, renamed_label
from harness.tools._names import snake_case

__all__ = ["STRATEGY_LABELS", "strategy_label"]

STRATEGY_LABELS: dict[str, Renamed] = {
    old: Renamed(old=old, new=new, module="", since="0.2.0", removal="0.3.0")
    for old, new in (
        ("EntityDiscovery", "discovery"),
        ("DeclaredChanges", "declared"),
        ("ToolGroups", "groups"),
        ("Phases", "phases"),
        ("SectionDisclosure", "sections"),
        ("RunIntrospection", "introspection"),
        ("UsageIntrospection", "usage"),
    )
}
"""Old label -> its rename (``StateMachine[X]`` is read by ``strategy_label`` itself)."""

_STATE_MACHINE = re.compile(r"StateMachine\[(\w+)\]")


def strategy_label(value: str, what: str) -> str:
    """``value``, or the label the harness records now when ``value`` is an old one
    (warning that it is deprecated); ``what`` names the argument (``"injected(strategy=...)"``).
    """
    old = _STATE_MACHINE.fullmatch(value)
    if old is not None:
        new = f"state_machine:{snake_case(old.group(1))}"
        renamed = Renamed(old=value, new=new, module="", since="0.2.0", removal="0.3.0")
        return renamed_label(value, {value: renamed}, what, stacklevel=4)
    return renamed_label(value, STRATEGY_LABELS, what, stacklevel=4)
