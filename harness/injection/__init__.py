"""Injection strategies: how the offered toolset changes during a run."""

from harness.injection._discovery import EntityDiscovery
from harness.injection._providers import ProviderSpec, find_providers, provider_spec, tool_provider
from harness.loop import (
    DeclaredChanges,
    InjectionContext,
    InjectionStrategy,
    StrategyChain,
    ToolsetChange,
)

__all__ = [
    "DeclaredChanges",
    "EntityDiscovery",
    "InjectionContext",
    "InjectionStrategy",
    "ProviderSpec",
    "StrategyChain",
    "ToolsetChange",
    "find_providers",
    "provider_spec",
    "tool_provider",
]
