"""The ``mcp_servers`` section of a scenario file: MCP servers, their facades and groups.

```yaml
mcp_servers:
  - name: shop
    fake:                                   # an in-memory FakeMcpServer...
      tools: [{name: search, result: "[]"}]
      changes: [{after_call: search, add: [{name: buy}]}]
    # command: [python, fixtures/mcp_stdio_server.py]   # ...or a stdio command line
    # shutdown_grace: 4                                 # seconds a stdio server gets to exit
    # url: http://127.0.0.1:8765/mcp                    # ...or streamable HTTP
    meta: {allow: [user_id]}                # pass (default), none, {allow: [...]}, {deny: [...]}
    names: keep                             # or prefix
    offer: true                             # default: true unless facades or a group are given
    facades: [{name: shop_tools, description: Shop tools, patterns: ["s.*"]}]
    group: {name: shop, description: The shop, permissions: [], active: false}
```
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness._errors import ScenarioError
from harness.injection import InjectionStrategy, ToolGroups
from harness.mcp import (
    FakeMcpServer,
    McpServer,
    McpTools,
    MetaConverter,
    allow_keys,
    deny_keys,
    mcp_facade,
    mcp_group,
    no_meta,
    pass_through,
)
from harness.tools import Tool

__all__ = ["McpParts", "McpServerSpec", "build_mcp"]

_STRICT = ConfigDict(extra="forbid", frozen=True)


class McpFacadeSpec(BaseModel):
    """An MCP facade (see ``harness.mcp.mcp_facade``)."""

    model_config = _STRICT

    name: str
    description: str
    names: list[str] | None = None
    patterns: list[str] | None = None
    notes: list[str] = Field(default_factory=list)
    remove_on_invoke: bool = False
    exclusive: bool = False


class McpGroupSpec(BaseModel):
    """An MCP tool group (see ``harness.mcp.mcp_group``), managed by one ``ToolGroups``."""

    model_config = _STRICT

    name: str
    description: str = ""
    permissions: list[str] = Field(default_factory=list)
    active: bool = False


class McpServerSpec(BaseModel):
    """One MCP server of a scenario."""

    model_config = _STRICT

    name: str
    fake: dict[str, Any] | None = None
    """``{tools: [...], changes: [...]}`` for an in-memory ``FakeMcpServer``."""
    command: list[str] | None = None
    """A stdio command line (``python`` means the running interpreter)."""
    url: str | None = None
    """A streamable HTTP endpoint (loopback only in tests)."""
    meta: Literal["pass", "none"] | dict[Literal["allow", "deny"], list[str]] = "pass"
    names: Literal["keep", "prefix"] = "keep"
    offer: bool | None = None
    init_timeout: float = 10.0
    shutdown_grace: float = 4.0
    """Seconds a stdio server gets to exit after the run (``McpServer``'s default)."""
    facades: list[McpFacadeSpec] = Field(default_factory=list)
    group: McpGroupSpec | None = None


@dataclasses.dataclass(frozen=True)
class McpParts:
    """What a scenario's MCP servers add to a run; ``close()`` after the run."""

    servers: tuple[McpServer, ...] = ()
    fakes: tuple[FakeMcpServer, ...] = ()
    tools: tuple[Tool, ...] = ()
    strategies: tuple[InjectionStrategy, ...] = ()

    def close(self) -> None:
        """Close every server connection (all of them, even if one close raises: an
        ``McpServerKilled`` warning made an error)."""
        with contextlib.ExitStack() as stack:
            for server in self.servers:
                stack.callback(server.close)


def _meta(spec: McpServerSpec, where: str) -> MetaConverter:
    if spec.meta == "pass":
        return pass_through()
    if spec.meta == "none":
        return no_meta()
    assert isinstance(spec.meta, dict)
    if len(spec.meta) != 1:
        raise ScenarioError(f"{where}meta takes one of allow or deny, got {sorted(spec.meta)}")
    ((kind, keys),) = spec.meta.items()
    return allow_keys(*keys) if kind == "allow" else deny_keys(*keys)


def _target(spec: McpServerSpec, where: str) -> tuple[Any, FakeMcpServer | None]:
    given = [k for k in ("fake", "command", "url") if getattr(spec, k) is not None]
    if len(given) != 1:
        raise ScenarioError(
            f"{where}MCP server {spec.name!r} needs exactly one of fake, command or url, "
            f"got {given or 'none'}"
        )
    if spec.fake is not None:
        fake = FakeMcpServer.from_data({"name": spec.name, **spec.fake})
        return fake, fake
    if spec.command is not None:
        command = list(spec.command)
        if command and command[0] == "python":
            command[0] = sys.executable
        return command, None
    return spec.url, None


def build_mcp(specs: list[McpServerSpec], where: str) -> McpParts:
    """Fresh servers, facades, groups and strategies for one run of a scenario."""
    servers: list[McpServer] = []
    fakes: list[FakeMcpServer] = []
    tools: list[Tool] = []
    groups = []
    active = []
    for spec in specs:
        target, fake = _target(spec, where)
        if fake is not None:
            fakes.append(fake)
        server = McpServer(
            spec.name,
            target,
            names=spec.names,
            meta=_meta(spec, where),
            init_timeout=spec.init_timeout,
            shutdown_grace=spec.shutdown_grace,
        )
        servers.append(server)
        for facade in spec.facades:
            tools.append(
                mcp_facade(
                    server,
                    facade.name,
                    facade.description,
                    names=facade.names,
                    patterns=facade.patterns,
                    notes=facade.notes,
                    remove_on_invoke=facade.remove_on_invoke,
                    exclusive=facade.exclusive,
                )
            )
        if spec.group is not None:
            group = spec.group
            groups.append(
                mcp_group(
                    server,
                    group.name,
                    description=group.description,
                    permissions=group.permissions,
                )
            )
            if group.active:
                active.append(group.name)
    strategies: list[InjectionStrategy] = []
    if groups:
        strategies.append(ToolGroups(groups, active=active))
    offering = [s for s, spec in zip(servers, specs, strict=True) if _offers(spec)]
    following = [s for s, spec in zip(servers, specs, strict=True) if not _offers(spec)]
    if offering:
        strategies.append(McpTools(*offering))
    if following:
        strategies.append(McpTools(*following, offer=False))
    return McpParts(tuple(servers), tuple(fakes), tuple(tools), tuple(strategies))


def _offers(spec: McpServerSpec) -> bool:
    if spec.offer is not None:
        return spec.offer
    return not (spec.facades or spec.group)
