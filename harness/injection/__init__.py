"""Injection strategies: how the offered toolset changes during a run."""

from harness import _deprecation
from harness.injection._agentic import AgentOutcome, SystemPrompt, agent_tool
from harness.injection._allowed import AllowedTools
from harness.injection._blackboard import blackboard_entries, safe_value_text
from harness.injection._blackboard_tools import blackboard_tools
from harness.injection._chaining import ChainedType, ToolChaining
from harness.injection._delivery import AddTools, Delivery
from harness.injection._discovery import EntityDiscovery
from harness.injection._facade import ALL_CATEGORIES, Facade, facade, is_facade
from harness.injection._facade_decl import FacadeClassSpec, facade_class, facade_of, facade_spec
from harness.injection._groups import GroupRequest, GroupsChanged, ToolGroup, ToolGroups
from harness.injection._introspection import (
    MessageSent,
    ProgressReported,
    RunInfo,
    RunIntrospection,
)
from harness.injection._phases import PhaseChanged, Phases, phase_after
from harness.injection._playbook import (
    Condition,
    Playbook,
    Unlock,
    called_all,
    called_any,
    in_state,
    produced,
    unlock,
    was_called,
    when,
)
from harness.injection._providers import ProviderSpec, find_providers, provider_spec, tool_provider
from harness.injection._sections import (
    SUMMARY_SEPARATOR,
    SUMMARY_SUFFIX,
    PromptTemplate,
    Section,
    Visibility,
)
from harness.injection._sections_run import RunRestarted, arun_with_sections, run_with_sections
from harness.injection._sections_strategy import (
    ALREADY_EXPANDED,
    SectionDisclosure,
    SectionRead,
    SectionSession,
)
from harness.injection._state_machine import StateMachine, StateTransition
from harness.injection._stub import StubTool, stub_of
from harness.injection._subagent import subagent_tool
from harness.injection._tool_search import ToolSearch
from harness.injection._usage_tools import (
    Budget,
    ModelPrice,
    UsageCost,
    UsageIntrospection,
    cost_report,
)
from harness.loop import (
    DeclaredChanges,
    InjectionContext,
    InjectionStrategy,
    StrategyChain,
    ToolsetChange,
)

__all__ = [
    "ALL_CATEGORIES",
    "ALREADY_EXPANDED",
    "SUMMARY_SEPARATOR",
    "SUMMARY_SUFFIX",
    "AddTools",
    "AgentOutcome",
    "AllowedTools",
    "Budget",
    "ChainedType",
    "Condition",
    "DeclaredChanges",
    "Delivery",
    "EntityDiscovery",
    "Facade",
    "FacadeClassSpec",
    "GroupRequest",
    "GroupsChanged",
    "InjectionContext",
    "InjectionStrategy",
    "MessageSent",
    "ModelPrice",
    "PhaseChanged",
    "Phases",
    "Playbook",
    "ProgressReported",
    "PromptTemplate",
    "ProviderSpec",
    "RunInfo",
    "RunIntrospection",
    "RunRestarted",
    "Section",
    "SectionDisclosure",
    "SectionRead",
    "SectionSession",
    "StateMachine",
    "StateTransition",
    "StrategyChain",
    "StubTool",
    "SystemPrompt",
    "ToolChaining",
    "ToolGroup",
    "ToolGroups",
    "ToolSearch",
    "ToolsetChange",
    "Unlock",
    "UsageCost",
    "UsageIntrospection",
    "Visibility",
    "agent_tool",
    "arun_with_sections",
    "blackboard_entries",
    "blackboard_tools",
    "called_all",
    "called_any",
    "cost_report",
    "facade",
    "facade_class",
    "facade_of",
    "facade_spec",
    "find_providers",
    "in_state",
    "is_facade",
    "phase_after",
    "produced",
    "provider_spec",
    "run_with_sections",
    "safe_value_text",
    "stub_of",
    "subagent_tool",
    "tool_provider",
    "unlock",
    "was_called",
    "when",
]

# the playbook condition ``called`` clashed with the assertion ``harness.assertions.called``
__getattr__ = _deprecation.deprecated_getattr(
    "harness.injection",
    {
        "called": _deprecation.Renamed(
            old="called",
            new="was_called",
            module="harness.injection._playbook",
            since="0.2.0",
            removal="0.3.0",
        )
    },
)
