"""The scenario file format (YAML), as pydantic models.

```yaml
name: seed_average_spend
description: What's John Smith's average spend?
agent: mypackage.agents:make_agent        # optional: a factory of prompt, tools, strategies
system: You are a CRM assistant.          # optional
prompt: What's John Smith's average spend?
tools: [fixtures.customers:search_customer]   # import paths; "mod:factory()" calls a factory,
                                              # {"mod:factory": {kwargs}} calls it with kwargs
strategies: [entity_discovery]                # registry names, {name: {options}}, or import paths
options: {max_iterations: 10}                 # LoopOptions fields
context: {}                                   # run-level call context values
context_objects: []                           # typed context objects (import paths/factories)
model:
  steps: [{call: search_customer, args: {name: John Smith}}, ...]
  # an argument may be a value seen earlier: {$from: call 1, path: "customers[0].id"}
  # (see harness.models._scripted._refs); {call: "customer_*_get", rank: 2} picks the 2nd match
expect:
  output: "..."                               # or output_contains
  timeline:
    - {offered: 1, calls: [search_customer], injected: [customer_c123_get_average_spend]}
    - {calls: [customer_c123_get_average_spend]}
    - {answer: true}
```
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from harness.formats._format import tool_choice_from_any_param
from harness.models._scripted._expect_choice import tool_choice_data
from harness.scenarios._mcp import McpServerSpec

__all__ = [
    "CompletionExpect",
    "ExpectSpec",
    "ModelSpec",
    "PlacementSpec",
    "ScenarioSpec",
    "TimelineStep",
    "TurnSpec",
]

_STRICT = ConfigDict(extra="forbid", frozen=True)


class TimelineStep(BaseModel):
    """What one iteration must look like; omitted keys are not checked."""

    model_config = _STRICT

    offered: int | None = None
    """Number of tools offered on the request."""
    offered_includes: list[str] = Field(default_factory=list)
    """Names or globs that must be offered."""
    offered_excludes: list[str] = Field(default_factory=list)
    """Names or globs that must not be offered."""
    calls: list[str] | None = None
    """Tool names (or globs) called in this turn, in order."""
    errors: list[str] | None = None
    """Names of the calls in this turn that ended in an error result."""
    injected: list[str] | None = None
    """Names or globs of tools added during this iteration: each must match at least one
    added tool, as in ``harness.assertions.injected`` (``[ticket_t101_*]`` covers all of
    that ticket's tools); ``[]``: nothing was added."""
    removed: list[str] | None = None
    """Names or globs of tools removed during this iteration, read like ``injected``."""
    to_user: list[str] | None = None
    """Names of the calls in this turn whose result spoke to the user (``UserNotified``)."""
    handoffs: list[str] | None = None
    """Names of the calls in this turn that handed work to a nested run (agent or
    subagent tools)."""
    started: list[str] | None = None
    """Names of the calls in this turn that started async work (``ToolResult.started``)."""
    follow_ups: list[str] | None = None
    """Tools whose async results reached the model on this turn's request, in order."""
    answer: bool | str | None = None
    """``true``: the turn is the final answer; a string: the exact answer text (a final
    answer, or a text the continuation policy went on from)."""
    continued: bool | None = None
    """``true``: a text answer that did not end the turn (a ReAct thought)."""
    deferred: list[str] | None = None
    """Names (or globs) deferred on the request (declared, not revealed yet), in order."""
    discovered: list[str] | None = None
    """Names (or globs) this turn's tool searches revealed, in order."""
    searches: int | None = None
    """How many tool searches this turn made."""
    allowed: list[str] | None = None
    """The allowed subset of the request's tool choice, in order (``[]``: none)."""
    added: list[str] | None = None
    """Names (or globs) injected during this iteration by a client's mid-conversation
    addition (``via="addition"``: ``tools`` unchanged), in order; they are in
    ``injected`` too."""


class CompletionExpect(BaseModel):
    """How one async call must end (``Trace.completions``, in the order they settled)."""

    model_config = _STRICT

    tool: str
    """The tool that started the work."""
    status: str
    """``delivered`` or ``lost``."""
    reason: str | None = None
    """For a lost one: ``deadline``, ``run_ended``, ``return_direct``, ... (not checked
    when omitted)."""


class ExpectSpec(BaseModel):
    """What the run must produce."""

    model_config = _STRICT

    output: Any = None
    """Exact final output (text, or the parsed structured value)."""
    output_contains: str | None = None
    """Text the final output must contain."""
    error: str | None = None
    """Name of the error class the run must raise (e.g. ``ToolNotFound``)."""
    timeline: list[TimelineStep] | None = None
    """One entry per iteration; the run must have exactly this many iterations."""
    restarts: int | None = None
    """Number of restarts (providers without dynamic tools)."""
    user_outputs: list[str] | None = None
    """Exact ``RunResult.user_outputs``: what tool results said to the user, in order."""
    completions: list[CompletionExpect] | None = None
    """How every async call ended, in order (delivered as a follow-up, or lost and why)."""
    requests: list[str] | None = None
    """Sessions files: the session that made each model request, in order (every recorded
    request of a converted cassette, interleaved conversations included)."""
    properties: list[str] = Field(default_factory=list)
    """Import paths of properties (``module:function``) called with the run (an
    ``AgentRun``, finished or not); one raising ``AssertionError`` fails the scenario."""
    invariants: bool = False
    """Check the run's invariants (``harness.scenarios.check_invariants``): a sound history,
    explained toolset changes, valid names, limits, and no ``context`` value visible to the
    model."""


class ModelSpec(BaseModel):
    """The scripted model."""

    model_config = _STRICT

    steps: list[Any]
    """Scripted steps (see ``harness.models.steps_from_data``)."""
    lenient: bool = False
    """Let the script call tools that are not offered (to test unknown-tool handling)."""
    factory: str | None = None
    """Import path of a model factory ``f(steps, lenient) -> Model``, instead of ScriptedModel."""
    capabilities: (
        Literal[
            "openai-chat",
            "openai-responses",
            "anthropic-messages",
            "bedrock-converse",
            "gemini-generate",
        ]
        | None
    ) = None
    """The provider the model stands for: it declares the native tools that format's
    adapter declares (its tool searches, allowed subsets), so ``native: always``
    strategies run in process. Default: the model's own (a scripted model's are Chat
    Completions'); in a comparison file, the comparison's ``format``."""


class TurnSpec(BaseModel):
    """One user turn of a session: the user's message, the script's steps, what to expect."""

    model_config = _STRICT

    prompt: str | None = None
    """The user's text (or ``messages``)."""
    messages: list[dict[str, Any]] | None = None
    """The user's messages (Chat Completions dicts), e.g. several at once."""
    steps: list[Any] | None = None
    """The scripted model's steps for this turn (required)."""
    expect: ExpectSpec = Field(default_factory=ExpectSpec)
    """What this turn must produce (its timeline covers this turn's requests only)."""


class PlacementSpec(BaseModel):
    """Where a session runs inside another one (interleaved conversations)."""

    model_config = _STRICT

    session: str
    """The other session's name."""
    tool: str | None = None
    """``during``: right after this tool's result in the other session (before its next
    request), e.g. an MCP sampling request made while the tool ran."""
    call: int = 1
    """``during``: which call of ``tool`` (1-based, counted over the session)."""
    turn: int | None = None
    """``after``: right after this user turn of the other session finished."""


class ScenarioSpec(BaseModel):
    """One scenario file (or one session of a ``sessions`` file)."""

    model_config = _STRICT

    name: str
    description: str = ""
    agent: str | None = None
    """Import path of an agent factory (``module:factory``): a function returning the
    keyword arguments of ``harness.run`` without the model (prompt, tools, strategies,
    system, loop options). It is called for each run; the file's own ``prompt``,
    ``system`` and ``options`` win over the factory's, its tools and strategies are added."""
    wire: str | None = None
    """With ``agent``: the wire format the agent calls (``openai-chat``,
    ``openai-responses``, ``anthropic``). The agent is then a wire factory
    ``(base_url, api_key) -> {run, prompt, state}`` on any framework, served the
    scripted model on loopback in that format and judged by ``expect.properties``,
    ``error``, ``output`` and ``timeline`` over the wire trace."""
    system: str | None = None
    prompt: str | None = None
    messages: list[dict[str, Any]] | None = None
    """A full starting history (Chat Completions dicts) instead of ``prompt``."""
    tools: list[str | dict[str, Any]] = Field(default_factory=list)
    """Import paths of tools (``mod:factory()`` calls a factory), or ``{path: {kwargs}}``."""
    strategies: list[str | dict[str, Any]] = Field(default_factory=list)
    options: dict[str, Any] = Field(default_factory=dict)
    """``LoopOptions`` fields; ``tool_choice`` in the neutral form (``required``, a tool
    name, ``{allowed: [names], mode: auto}``)."""
    context: dict[str, Any] = Field(default_factory=dict)
    context_objects: list[str | dict[str, Any]] = Field(default_factory=list)
    """Typed context objects of the run: import paths (``mod:factory()``) or
    ``{path: {kwargs}}`` (e.g. ``{"harness:ChatContext": {channel: web, chat_id: ...}}``)."""
    model: ModelSpec | None = None
    """The scripted model (required unless the steps are given per turn, or ``sessions``)."""
    expect: ExpectSpec = Field(default_factory=ExpectSpec)
    tags: list[str] = Field(default_factory=list)
    mcp_servers: list[McpServerSpec] = Field(default_factory=list)
    """MCP servers whose tools, facades and groups join the run (see ``harness.mcp``)."""
    turns: list[TurnSpec] | None = None
    """Several user turns of one session (docs/sessions.md); ``prompt``/``messages`` then
    give the history before the first turn, if any."""
    continuation: Any = None
    """Whether a text answer ends the turn: ``react``, ``{react: {nudge: ...}}``,
    ``{until_tool: NAME, nudge: ...}``, ``{nudge_after_results: TEXT}``,
    ``{continue_after: [REQUEST, ...]}``, an import path, or a list of these."""
    tool_choice: Any = None
    """A ``tool_choice`` schedule by request of each turn: a list (``[none, required]``) or
    ``{schedule: [...], then: last | repeat | default}``."""
    sessions: list[ScenarioSpec] | None = None
    """Several sessions in one file, each a scenario of its own (name, tools, turns...);
    ``harness run`` runs them all, in file order unless ``during``/``after`` places them."""
    during: PlacementSpec | None = None
    """A session that runs right after a tool's result in another session."""
    after: PlacementSpec | None = None
    """A session that runs right after a user turn of another session."""

    @field_validator("options")
    @classmethod
    def _neutral_tool_choice(cls, options: dict[str, Any]) -> dict[str, Any]:
        return neutral_tool_choice(options)


def neutral_tool_choice(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with a provider's ``tool_choice`` dict (deprecated since 0.2.0, removed
    in 0.3.0: files written before the neutral form) read by its format and written in the
    neutral form, with a ``DeprecationWarning`` that shows the spelling to use."""
    given = options.get("tool_choice")
    if not isinstance(given, Mapping) or set(given) <= {"mode", "name", "allowed"}:
        return options
    choice = tool_choice_from_any_param(given)
    if choice is None:
        return options  # LoopOptions says what is wrong with it
    warnings.warn(
        f"options: tool_choice {dict(given)!r} is a provider's tool_choice dict, deprecated "
        f"in scenario files since 0.2.0 and removed in 0.3.0: write "
        f"tool_choice: {tool_choice_data(choice)!r}",
        DeprecationWarning,
        stacklevel=2,
    )
    return {**options, "tool_choice": tool_choice_data(choice)}
