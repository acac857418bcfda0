"""Help text for people, not Python: how ``harness ... --help`` shows options and prose.

typer labels every parameter with its Python type (``--quiet <bool>``, ``paths
<list[Path]>``) and prints docstrings as written, reST double backticks and hard line
breaks included. ``HarnessGroup`` (the ``cls`` of the ``harness`` app and its
sub-apps) tidies each command as it is resolved or listed:

- a flag shows no type (``--quiet``), a list shows its item and ``...``
  (``paths <path>...``), other types keep typer's label (``--port <int>``); the
  usage line names an argument in capitals (``FILE``, not ``{file}``);
- ````name```` in help text reads ``name``, and the line breaks of a docstring's
  paragraph are joined (paragraphs stay apart).
"""

from __future__ import annotations

import re
from typing import Any

from typer.core import TyperGroup

__all__ = ["HarnessGroup", "plain_help"]

_LIST = re.compile(r"<list\[(\w+)\]>")
_BACKTICKS = re.compile(r"``([^`]+)``")
_TIDIED = "_harness_help_tidied"


def plain_help(text: str | None) -> str | None:
    """``text`` without reST backticks, each paragraph's lines joined."""
    if not text:
        return text
    paragraphs = re.split(r"\n\s*\n", _BACKTICKS.sub(r"\1", text).strip())
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


# click's objects are read by their attributes: typer vendors its own click (typer._click)
def _label(param: Any, ctx: Any) -> str | None:
    """What the type column shows for ``param``: nothing for a flag, ``<item>...`` for a
    list, else typer's own label."""
    if getattr(param, "is_flag", False):
        return None
    shown = type(param).display_type_rich(param, ctx)
    if not isinstance(shown, str):
        return None
    return _LIST.sub(lambda m: f"<{m.group(1).lower()}>...", shown)


def _tidy(command: Any, ctx: Any) -> None:
    """Tidy ``command`` (and, for a group, every subcommand) once."""
    if getattr(command, _TIDIED, False):
        return
    setattr(command, _TIDIED, True)
    command.help = plain_help(command.help)
    command.short_help = plain_help(command.short_help)
    for param in command.get_params(ctx):
        if hasattr(type(param), "display_type_rich"):
            label = _label(param, ctx)
            param.display_type_rich = lambda ctx, label=label: label
        kind = getattr(param, "param_type_name", "")
        if kind == "option":
            param.help = plain_help(param.help)
        elif kind == "argument" and hasattr(param, "_usage_display_name"):
            param._usage_display_name = lambda param=param: _usage_name(param)
    for sub in getattr(command, "commands", {}).values():
        _tidy(sub, ctx)


def _usage_name(param: Any) -> str:
    """An argument on the usage line: ``FILE``, ``[PATHS]...`` (typer writes ``{file}``)."""
    name = str(param.metavar or param.name).upper()
    name = name if param.required else f"[{name}]"
    return name + ("..." if param.nargs != 1 else "")


class HarnessGroup(TyperGroup):
    """A typer group whose commands' help reads as prose (see the module docstring)."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _tidy(command, ctx)
        return command

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _tidy(self, ctx)
        super().format_help(ctx, formatter)
