"""Bad arguments from the model come back as a ToolError that says how to call the tool."""

from __future__ import annotations

from typing import Any

import pytest

from loom.tools.base import RiskByArguments, Tool, ToolError, ToolRegistry
from tests.support.tools import Runner, tool_named

BUILTINS = [
    "content_search",
    "directory_list",
    "file_edit",
    "file_read",
    "file_search",
    "file_write",
    "git",
    "shell",
]
BAD_CALLS: list[tuple[str, Any, str]] = [
    ("file_read", {}, "needs the argument 'path'"),
    ("file_read", {"path": 3}, "'path' must be a string"),
    ("file_read", {"path": "a", "offset": "ten"}, "'offset' must be a integer"),
    ("file_read", {"path": "a", "offset": 0}, "at least 1"),
    ("file_read", {"path": "a", "limit": True}, "'limit' must be a integer"),
    ("file_read", {"file": "a"}, "no argument 'file'"),
    ("file_read", ["a"], "takes a JSON object"),
    ("file_write", {"path": "a"}, "needs the argument 'content'"),
    ("file_write", {"path": "a", "content": None}, "needs the argument 'content'"),
    ("file_edit", {"path": "a", "old_string": "", "new_string": "b"}, "must not be empty"),
    (
        "file_edit",
        {"path": "a", "old_string": "x", "new_string": "y", "replace_all": "yes"},
        "'replace_all' must be a boolean",
    ),
    ("file_search", {"pattern": "*.py", "sort": "size"}, "must be one of"),
    ("content_search", {"pattern": "("}, "not a valid regular expression"),
    ("content_search", {"pattern": "x", "context": -1}, "at least 0"),
    ("directory_list", {"depth": 0}, "at least 1"),
    ("shell", {}, "needs the argument 'command'"),
    ("shell", {"command": "ls", "timeout": 100000}, "at most"),
    ("shell", {"command": ["ls"]}, "'command' must be a string"),
    ("git", {"subcommand": "frobnicate"}, "must be one of"),
    ("git", {"subcommand": "log", "args": "--oneline"}, "'args' must be a array"),
    ("git", {"subcommand": "log", "args": [1]}, "'args[0]' must be a string"),
]


@pytest.mark.parametrize(("tool", "args", "message"), BAD_CALLS)
async def test_bad_arguments_are_tool_errors(
    registry: ToolRegistry, run: Runner, tool: str, args: Any, message: str
) -> None:
    found = registry.get(tool)
    assert found is not None
    with pytest.raises(ToolError) as caught:
        await found.run(args, run.ctx)
    text = str(caught.value)
    assert message in text
    assert f"{tool}(" in text or "regular expression" in text  # says how to call it


def test_every_builtin_follows_the_protocol(registry: ToolRegistry) -> None:
    assert set(BUILTINS) <= set(registry.names())
    for name in BUILTINS:
        tool = registry.get(name)
        assert isinstance(tool, Tool)
        assert tool.parameters["type"] == "object"
        assert "additionalProperties" not in tool.parameters  # tokens: refused below anyway
        assert tool.description
    specs = {spec.name: spec for spec in registry.specs()}
    assert "path" in specs["file_read"].parameters["properties"]


@pytest.mark.parametrize("tool", BUILTINS)
async def test_an_argument_the_schema_does_not_name_is_refused(
    registry: ToolRegistry, run: Runner, tool: str
) -> None:
    found = registry.get(tool)
    assert found is not None
    with pytest.raises(ToolError, match="has no argument 'bogus'"):
        await found.run({"bogus": 1}, run.ctx)


def test_permission_subjects(registry: ToolRegistry, root) -> None:  # type: ignore[no-untyped-def]
    def subject(tool: str, args: dict[str, Any]) -> str | None:
        return tool_named(registry, tool).permission_subject(args)

    assert subject("file_write", {"path": "./src/../a.py"}) == "a.py"
    assert subject("file_read", {"path": str(root / "b" / "c.txt")}) == "b/c.txt"
    assert subject("shell", {"command": "pytest -x"}) == "pytest -x"
    assert subject("git", {"subcommand": "commit"}) == "git commit"
    assert subject("file_read", {"path": 5}) is None


def test_git_risk_depends_on_subcommand(registry: ToolRegistry) -> None:
    git = registry.get("git")
    assert isinstance(git, RiskByArguments)
    assert git.risk_for({"subcommand": "status"}) == "read"
    assert git.risk_for({"subcommand": "stash", "args": ["list"]}) == "read"
    assert git.risk_for({"subcommand": "stash"}) == "write"
    assert git.risk_for({"subcommand": "commit"}) == "write"
