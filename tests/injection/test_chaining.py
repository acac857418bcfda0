"""Tool chaining: placeholders until an instance is returned, last instance wins, auto mode."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import pytest

from harness import (
    ChainedType,
    Event,
    RunResult,
    ScriptedModel,
    StrategyWarning,
    ToolChaining,
    UsageError,
    call,
    llm_tool,
    reply,
    run,
)
from harness.loop import InjectionContext


@dataclasses.dataclass
class Doc:
    title: str
    words: int = 10

    @llm_tool
    def doc_title(self) -> str:
        """The current document's title."""
        return self.title

    @llm_tool
    def doc_words(self, factor: int = 1) -> int:
        """Word count."""
        return self.words * factor


@dataclasses.dataclass
class Sheet:
    name: str

    @llm_tool
    def sheet_name(self) -> str:
        """The sheet's name."""
        return self.name


@llm_tool
def open_doc(title: str, words: int = 10) -> Doc:
    """Open a document."""
    return Doc(title, words)


@llm_tool
def open_docs() -> list[Doc]:
    """Open several documents."""
    return [Doc("a"), Doc("b")]


@llm_tool
def open_sheet(name: str) -> Sheet:
    """Open a sheet."""
    return Sheet(name)


@llm_tool
def doc_class() -> str:
    """Returns text."""
    return "text"


E = TypeVar("E", bound=Event)


def events(result: RunResult, kind: type[E]) -> list[E]:
    return [e for e in result.trace.events if isinstance(e, kind)]


def offered(model: ScriptedModel) -> list[tuple[str, ...]]:
    return [r.tool_names for r in model.requests]


def test_placeholders_offered_at_once_and_answer_not_available() -> None:
    model = ScriptedModel([call("doc_words", {"factor": "not even an int"}), reply("ok")])
    result = run(model, "go", tools=[open_doc], strategies=[ToolChaining([Doc])])
    assert offered(model) == [
        ("open_doc", "doc_title", "doc_words"),
        ("open_doc", "doc_title", "doc_words"),
    ]
    record = result.trace.calls[0]
    assert record.is_error and record.error_kind == "not_available"
    assert record.content == "not available yet: call a tool that returns a Doc first"
    (change,) = result.trace.changes
    assert change.strategy == "chaining" and change.after_call is None
    assert change.added == ("doc_title", "doc_words")
    assert "registered types Doc" in change.reason
    schema = model.requests[0].tools[2].parameters
    assert "factor" in schema["properties"]


def test_returned_instance_binds_and_last_instance_wins() -> None:
    model = ScriptedModel(
        [
            call("open_doc", {"title": "first"}),
            call("doc_title"),
            call("open_doc", {"title": "second", "words": 3}),
            call("doc_title"),
            call("doc_words", {"factor": 2}),
            reply("ok"),
        ]
    )
    result = run(model, "go", tools=[open_doc], strategies=[ToolChaining([Doc])])
    assert set(offered(model)) == {("open_doc", "doc_title", "doc_words")}
    contents = [c.content for c in result.trace.calls]
    assert contents[1] == "first" and contents[3] == "second" and contents[4] == "6"
    binds = [c for c in result.trace.changes if c.replaced]
    assert [c.replaced for c in binds] == [("doc_title", "doc_words")] * 2
    assert [c.after_call for c in binds] == ["open_doc", "open_doc"]
    assert "open_doc returned a Doc" in binds[0].reason


def test_same_instance_twice_binds_once_and_lists_do_not_bind() -> None:
    doc = Doc("same")

    @llm_tool
    def get_same() -> Doc:
        """Same doc."""
        return doc

    model = ScriptedModel(
        [call("open_docs"), call("doc_title"), call("get_same"), call("get_same"), reply("ok")]
    )
    result = run(model, "go", tools=[open_docs, get_same], strategies=[ToolChaining([Doc])])
    assert result.trace.calls[1].is_error  # a list of Docs is not "a single instance"
    assert len([c for c in result.trace.changes if c.replaced]) == 1


def test_predicate_filters_instances_and_sees_the_context() -> None:
    seen: list[int] = []

    def long_docs(doc: Any, context: InjectionContext) -> bool:
        seen.append(context.iteration)
        return bool(doc.words >= 100)

    chaining = ToolChaining([ChainedType(cls=Doc, predicate=long_docs)])
    model = ScriptedModel(
        [
            call("open_doc", {"title": "short"}),
            call("doc_title"),
            call("open_doc", {"title": "long", "words": 500}),
            call("doc_title"),
            reply("ok"),
        ]
    )
    result = run(model, "go", tools=[open_doc], strategies=[chaining])
    assert seen == [1, 3]
    assert result.trace.calls[1].is_error
    assert result.trace.calls[3].content == "long"


def test_several_types_bind_independently() -> None:
    chaining = ToolChaining([Doc]).register(Sheet)
    model = ScriptedModel(
        [call("open_sheet", {"name": "s1"}), call("sheet_name"), call("doc_title"), reply("ok")]
    )
    result = run(model, "go", tools=[open_sheet], strategies=[chaining])
    assert offered(model)[0] == ("open_sheet", "doc_title", "doc_words", "sheet_name")
    assert result.trace.calls[1].content == "s1"
    assert "returns a Doc first" in result.trace.calls[2].content


def test_placeholder_clashing_with_an_offered_tool_is_skipped_with_warning() -> None:
    @llm_tool(name="doc_title")
    def existing() -> str:
        """Already here."""
        return "mine"

    model = ScriptedModel([call("open_doc", {"title": "t"}), call("doc_title"), reply("ok")])
    result = run(model, "go", tools=[existing, open_doc], strategies=[ToolChaining([Doc])])
    assert offered(model)[0] == ("doc_title", "open_doc", "doc_words")
    assert result.trace.calls[1].content == "mine"  # never replaced: not ours
    warnings = events(result, StrategyWarning)
    assert len(warnings) == 1 and "placeholder 'doc_title' not added" in warnings[0].message


def test_auto_mode_exposes_any_object_and_replaces_previous_bindings() -> None:
    model = ScriptedModel(
        [
            call("open_doc", {"title": "d"}),
            call("doc_title"),
            call("open_sheet", {"name": "s"}),
            call("sheet_name"),
            call("doc_class"),
            reply("ok"),
        ]
    )
    result = run(
        model, "go", tools=[open_doc, open_sheet, doc_class], strategies=[ToolChaining(auto=True)]
    )
    assert offered(model) == [
        ("open_doc", "open_sheet", "doc_class"),
        ("open_doc", "open_sheet", "doc_class", "doc_title", "doc_words"),
        ("open_doc", "open_sheet", "doc_class", "doc_title", "doc_words"),
        ("open_doc", "open_sheet", "doc_class", "sheet_name"),
        ("open_doc", "open_sheet", "doc_class", "sheet_name"),
        ("open_doc", "open_sheet", "doc_class", "sheet_name"),
    ]
    second = result.trace.changes[1]
    assert second.removed == ("doc_title", "doc_words") and second.added == ("sheet_name",)
    assert "replacing the tools of the previous object" in second.reason


def test_auto_mode_skips_names_taken_by_other_tools() -> None:
    @llm_tool(name="sheet_name")
    def taken() -> str:
        """Taken."""
        return "x"

    model = ScriptedModel([call("open_sheet", {"name": "s"}), reply("ok")])
    result = run(model, "go", tools=[open_sheet, taken], strategies=[ToolChaining(auto=True)])
    assert offered(model)[1] == ("open_sheet", "sheet_name")
    assert "not exposed" in events(result, StrategyWarning)[0].message


def test_registered_types_win_over_auto_mode() -> None:
    model = ScriptedModel([call("open_doc", {"title": "d"}), reply("ok")])
    result = run(model, "go", tools=[open_doc], strategies=[ToolChaining([Doc], auto=True)])
    assert offered(model)[1] == ("open_doc", "doc_title", "doc_words")
    assert result.trace.changes[1].replaced == ("doc_title", "doc_words")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ToolChaining([dict]), "has no @llm_tool methods"),
        (lambda: ToolChaining([Doc("x")]), "needs a class"),  # type: ignore[list-item]
        (lambda: ToolChaining([Doc, Doc]), "already registered by"),
        (lambda: ToolChaining().register(Doc, predicate=3), "must be a function"),  # type: ignore[arg-type]
    ],
)
def test_bad_registrations(build: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        build()


def test_returned_classes_and_same_auto_object_are_ignored() -> None:
    sheet = Sheet("same")

    @llm_tool
    def give_class() -> Any:
        """Returns a class."""
        return Doc

    @llm_tool
    def give_sheet() -> Sheet:
        """The same sheet every time."""
        return sheet

    model = ScriptedModel([call("give_class"), call("give_sheet"), call("give_sheet"), reply("ok")])
    result = run(
        model, "go", tools=[give_class, give_sheet], strategies=[ToolChaining([Doc], auto=True)]
    )
    assert [c.added for c in result.trace.changes] == [("doc_title", "doc_words"), ("sheet_name",)]


def test_no_binding_when_placeholders_were_not_ours() -> None:
    @llm_tool(name="doc_title")
    def t1() -> str:
        """Taken."""
        return "x"

    @llm_tool(name="doc_words")
    def t2() -> str:
        """Taken."""
        return "y"

    model = ScriptedModel([call("open_doc", {"title": "d"}), reply("ok")])
    result = run(model, "go", tools=[t1, t2, open_doc], strategies=[ToolChaining([Doc])])
    assert [c.replaced for c in result.trace.changes] == []
    assert offered(model)[1] == ("doc_title", "doc_words", "open_doc")
