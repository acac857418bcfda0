"""Every wire format module has the same names, each for the same job (``WireFormat``)."""

from __future__ import annotations

import inspect

import pytest

from harness.formats import (
    WireFormat,
    anthropic_messages,
    bedrock_converse,
    gemini_generate,
    openai_chat,
    openai_responses,
    wire_formats,
)

SHARED = {
    "CODEC",
    "HISTORY_KEY",
    "NAME",
    "ROUTE",
    "RequestReader",
    "SYSTEM_FIRST",
    "error_details",
    "error_for",
    "prompt_choice",
    "prompt_message",
    "prompt_pieces",
    "prompt_tools",
    "request_body",
    "request_from_body",
    "response_body",
    "response_events",
    "response_from_body",
    "response_from_events",
    "response_from_sse",
    "response_headers",
    "tool_choice_from_param",
    "tool_choice_param",
    "tool_from_param",
    "tool_param",
}
"""The one naming scheme: what every format module exports."""

MODULES = [openai_chat, openai_responses, anthropic_messages, bedrock_converse, gemini_generate]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_every_format_exports_the_shared_names(module: object) -> None:
    assert set(module.__all__) >= SHARED  # type: ignore[attr-defined]
    protocol = {
        name
        for name in dir(WireFormat)
        if not name.startswith("_") and name not in ("RequestReader",)
    }
    assert protocol | {"RequestReader"} <= SHARED


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_shared_functions_take_the_same_leading_arguments(module: object) -> None:
    reference = openai_chat
    for name in sorted(SHARED):
        mine, theirs = getattr(module, name), getattr(reference, name)
        if not inspect.isfunction(mine):
            continue
        first = list(inspect.signature(mine).parameters)[:1]
        assert first == list(inspect.signature(theirs).parameters)[:1], name


def test_the_fake_serves_every_format_by_its_name_and_route() -> None:
    formats = wire_formats()
    assert [f.NAME for f in formats] == [
        "openai-chat",
        "openai-responses",
        "anthropic-messages",
        "bedrock-converse",
        "gemini-generate",
    ]
    assert [f.ROUTE for f in formats] == [
        "/chat/completions",
        "/responses",
        "/messages",
        "/model/{modelId}/converse",
        "/models/{model}:generateContent",
    ]
    assert [f.CODEC.name for f in formats] == [f.NAME for f in formats]
    assert len({f.ROUTE for f in formats}) == len(formats)
