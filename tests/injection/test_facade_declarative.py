"""Declarative facades: ``@facade_class`` (nested classes nest) and ``facade_of`` any object."""

from __future__ import annotations

from typing import Any

import pytest

from harness import FacadeError, ScriptedModel, UsageError, call, llm_tool, reply, run
from harness.injection import FacadeClassSpec, facade_class, facade_of, facade_spec, is_facade
from harness.tools import as_tool, tools_of


@facade_class(
    name="files",
    description="File tools.",
    notes=["Paths are relative."],
    category_param="kind",
)
class FileTools:
    @llm_tool(category="read")
    def read(self, path: str) -> str:
        """Read a file."""
        return f"read {path}"

    @llm_tool(category="write")
    def write(self, path: str) -> str:
        """Write a file."""
        return f"wrote {path}"

    @llm_tool
    def size(self) -> int:
        """Size."""
        return 1


@facade_class
class AdminOperations:
    """Administration."""

    @llm_tool
    def audit(self) -> str:
        """Audit log."""
        return "log"

    @facade_class(description="Users.")
    class UserManagement:
        @llm_tool
        def list_users(self) -> list[str]:
            """Users."""
            return ["ann"]

        @facade_class(name="user_permissions", description="Permissions.")
        class Permissions:
            @llm_tool
            def grant(self, user: str) -> str:
                """Grant."""
                return f"granted {user}"


class Plain:
    """Not decorated."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    @llm_tool
    def greet(self, name: str) -> str:
        """Greet someone."""
        return f"{self.prefix} {name}"


def offered(model: ScriptedModel) -> list[tuple[str, ...]]:
    return [r.tool_names for r in model.requests]


def test_decorator_records_spec_with_defaults() -> None:
    spec = facade_spec(AdminOperations)
    assert spec == FacadeClassSpec(name="admin_operations", description="Administration.")
    assert facade_spec(AdminOperations()) == spec
    assert facade_spec(Plain) is None
    inner = facade_spec(AdminOperations.UserManagement)
    assert inner is not None and inner.name == "user_management"


def test_class_facade_uses_categories_and_param_name() -> None:
    tool = facade_of(FileTools)
    assert tool.name == "files"
    assert tool.parameters["properties"]["kind"]["enum"] == ["read", "write", "all"]
    model = ScriptedModel(
        [
            call("files", {"kind": "read"}),
            call("read", {"path": "a"}),
            call("files_context"),
            reply("ok"),
        ]
    )
    result = run(model, "go", tools=[tool])
    assert offered(model) == [
        ("files",),
        ("files", "files_context", "read", "size"),
        ("files", "files_context", "read", "size"),
        ("files", "files_context", "read", "size"),
    ]
    assert result.trace.calls[1].content == "read a"
    assert "Usage notes:\n- Paths are relative." in result.trace.calls[2].content


def test_nested_classes_become_nested_facades() -> None:
    tool = facade_of(AdminOperations)
    assert tool.metadata["facade_tree"] == (
        "admin_operations",
        "user_management",
        "user_permissions",
    )
    model = ScriptedModel(
        [
            call("admin_operations"),
            call("user_management"),
            call("user_permissions"),
            call("grant", {"user": "bob"}),
            reply("ok"),
        ]
    )
    result = run(model, "go", tools=[tool])
    assert offered(model) == [
        ("admin_operations",),
        ("admin_operations", "admin_operations_context", "audit", "user_management"),
        (
            "admin_operations",
            "admin_operations_context",
            "audit",
            "user_management",
            "user_management_context",
            "list_users",
            "user_permissions",
        ),
        (
            "admin_operations",
            "admin_operations_context",
            "audit",
            "user_management",
            "user_management_context",
            "list_users",
            "user_permissions",
            "user_permissions_context",
            "grant",
        ),
        (
            "admin_operations",
            "admin_operations_context",
            "audit",
            "user_management",
            "user_management_context",
            "list_users",
            "user_permissions",
            "user_permissions_context",
            "grant",
        ),
    ]
    assert result.trace.calls[-1].content == "granted bob"
    assert [c.strategy for c in result.trace.changes] == ["unfolding"] * 3


def test_facade_of_any_object_with_explicit_name() -> None:
    tool = facade_of(Plain("Hello"), name="greeter", description="Greets people.")
    model = ScriptedModel([call("greeter"), call("greet", {"name": "Ada"}), reply("ok")])
    result = run(model, "go", tools=[tool])
    assert offered(model)[1] == ("greeter", "greeter_context", "greet")
    assert result.trace.calls[1].content == "Hello Ada"


def test_facade_of_overrides_decorator_settings() -> None:
    tool = facade_of(FileTools(), name="fs", exclusive=True)
    assert tool.name == "fs"
    model = ScriptedModel([call("fs", {"kind": "all"}), reply("ok")])
    run(model, "go", tools=[tool, Plain("x").greet])
    assert offered(model) == [
        ("fs", "greet"),
        ("fs", "fs_context", "read", "write", "size"),
    ]


@pytest.mark.parametrize(
    ("target", "kwargs", "message"),
    [
        (Plain("x"), {}, "pass name='...' and description='...'"),
        (Plain, {"name": "p", "description": "P."}, "no arguments"),
        (object(), {"name": "o", "description": "O."}, "no @llm_tool methods"),
    ],
)
def test_facade_of_bad_input(target: Any, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        facade_of(target, **kwargs)


def test_decorator_bad_input() -> None:
    with pytest.raises(UsageError, match="decorates classes"):
        facade_class(name="x", description="X.")(lambda: None)  # type: ignore[type-var]

    class NoDoc:
        pass

    with pytest.raises(UsageError, match="needs a description"):
        facade_class(NoDoc)


def test_cycle_between_decorated_classes_is_detected() -> None:
    @facade_class(name="outer", description="Outer.")
    class Outer:
        @llm_tool
        def ping(self) -> str:
            """Ping."""
            return "pong"

    @facade_class(name="inner", description="Inner.")
    class Inner:
        @llm_tool
        def pong(self) -> str:
            """Pong."""
            return "ping"

    Outer.Inner = Inner  # type: ignore[attr-defined]
    Inner.back = Outer  # type: ignore[attr-defined]
    with pytest.raises(FacadeError, match=r"cycle in nested facade classes: .*Outer -> .*Inner"):
        facade_of(Outer)


def test_tools_of_a_facade_class_instance_is_its_one_facade_tool() -> None:
    """Seed 003's ``Tool.fromInstance``: one function for both kinds of object."""
    (tool,) = tools_of(FileTools())
    assert tool.name == "files" and is_facade(tool)
    assert tool.definition() == as_tool(FileTools()).definition()  # what as_tool gives
    model = ScriptedModel([call("files", kind="read"), call("read", path="a"), reply("ok")])
    result = run(model, "go", tools=tools_of(FileTools()))
    assert result.trace.calls[1].content == "read a"


def test_tools_of_a_plain_object_and_flat_give_the_bound_methods() -> None:
    class Pinger:
        @llm_tool
        def ping(self) -> str:
            """Ping."""
            return "pong"

    assert [t.name for t in tools_of(Pinger())] == ["ping"]
    assert [t.name for t in tools_of(FileTools(), flat=True)] == ["read", "write", "size"]
