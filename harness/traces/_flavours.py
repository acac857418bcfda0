"""Which flavour of attributes a span is written in, and what it is: the one dispatch.

Three flavours are found in the wild, each read by one module: the current GenAI
conventions (``_genai``), the flat attributes of OpenLLMetry's older releases
(``_openllmetry``) and OpenInference (``_openinference``). The harness's own export is
the current conventions plus ``harness.*`` attributes (``_harness``). A span is a model
request, a tool call, an agent run (the root of a conversation) or none of these.
"""

from __future__ import annotations

from typing import Literal

from harness.traces import _genai, _openinference, _openllmetry
from harness.traces._attributes import ITERATION, RUN
from harness.traces._facts import RequestFacts, ToolFacts
from harness.traces._spans import Span

__all__ = ["Role", "request_facts", "role_of", "tool_facts"]

Role = Literal["request", "tool", "agent"]


def role_of(span: Span) -> Role | None:
    """What ``span`` is in a conversation, whichever flavour it is written in."""
    kind = span.get(_openinference.KIND)
    if kind is not None:
        if kind == "LLM":
            return "request"
        if kind == "TOOL":
            return "tool"
        return "agent" if kind == "AGENT" else None
    if span.get(RUN) is not None:
        return "agent"
    if _genai.is_agent(span):
        return "agent"
    if _genai.is_tool(span):
        return "tool"
    if _genai.is_request(span) or _openllmetry.is_request(span):
        return "request"
    return None


def request_facts(span: Span) -> RequestFacts:
    """The request a request span recorded, read by its flavour's module."""
    if span.get(_openinference.KIND) == "LLM":
        return _openinference.request_facts(span)
    if _openllmetry.is_request(span) and "gen_ai.input.messages" not in span.attributes:
        return _openllmetry.request_facts(span)
    if span.get(ITERATION) is not None:
        return _genai.request_facts(span, flavour="harness")
    return _genai.request_facts(span)


def tool_facts(span: Span) -> ToolFacts:
    """The call a tool span recorded, read by its flavour's module."""
    if span.get(_openinference.KIND) == "TOOL":
        return _openinference.tool_facts(span)
    return _genai.tool_facts(span)
