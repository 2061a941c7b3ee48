"""Errors a person sees: one `loom: error: ...` line from every command, no traceback,
and the LoomError tree they come from."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer
from tests.support.loom_cli import loom

from loom.core.errors import BadInput, LoomError, NotFound, SetupError


def test_loom_error_says_what_and_what_to_do() -> None:
    error = NotFound("no thread matches 'x'", "run `loom list` to see thread ids")
    assert str(error) == "no thread matches 'x'; run `loom list` to see thread ids"
    assert error.what == "no thread matches 'x'"
    assert error.todo == "run `loom list` to see thread ids"
    assert isinstance(error, LookupError) and isinstance(error, LoomError)
    assert isinstance(SetupError("bad model"), ValueError)
    assert str(BadInput("only what")) == "only what"


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["show", "T-nope"], 1, "no thread matches"),
        (["export", "T-nope", "--format", "pdf"], 1, "unknown format 'pdf'"),
        (["search", "--", "***"], 1, "no words to search for"),
        (["permissions", "list", "--project", "nope"], 2, "is not a folder"),
        (["sync"], 1, "not logged in to a sync server"),
        (["run", "-p", "hi", "-m", "nosuchprovider:x"], 1, "nosuchprovider"),
    ],
)
def test_every_command_reports_one_line(
    server: FakeLlmServer, project: Path, args: list[str], code: int, says: str
) -> None:
    done = loom(args, project, server)
    assert done.returncode == code, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("loom: error: ") and says in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_a_broken_config_is_one_line(server: FakeLlmServer, project: Path) -> None:
    (project / ".loom.toml").write_text("[model\n")
    for args in (["run", "-p", "hi"], ["config"]):
        done = loom(args, project, server)
        assert done.returncode == 1
        assert done.stderr.startswith("loom: error: ") and ".loom.toml" in done.stderr


def test_mcp_and_resume_errors_have_the_same_prefix(server: FakeLlmServer, project: Path) -> None:
    (project / ".loom.toml").write_text("[model\n")
    done = loom(["mcp", "list"], project, server)
    assert done.returncode == 2 and done.stderr.startswith("loom: error: "), done.stderr
    done = loom(["resume"], project, server, stdin="")  # no terminal for the picker
    assert done.returncode == 2
    assert done.stderr == "loom: error: give a thread ID (see `loom list`); the picker needs a " \
        "terminal.\n"  # fmt: skip


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["show"], "loom: error: Missing argument 'REF'."),
        (["list", "--bogus"], "loom: error: No such option: --bogus."),
        (["run", "--effort", "huge", "-p", "x"], "loom: error: Invalid value for --effort"),
        (["nosuchcommand"], "loom: error: No such command 'nosuchcommand'."),
    ],
)
def test_a_usage_error_ends_in_the_same_error_line(
    project: Path, args: list[str], says: str
) -> None:
    done = loom(args, project, None)
    assert done.returncode == 2
    *usage, said = done.stderr.strip().splitlines()
    assert said.startswith(says) and usage[0].startswith("Usage: loom")
    assert "╭" not in done.stderr and "Error" not in done.stderr  # no panel, one prefix


def test_help_names_an_argument_as_a_word() -> None:
    done = loom(["show", "--help"], Path.cwd(), None)
    assert "Usage: loom show [OPTIONS] REF" in done.stdout and "{ref}" not in done.stdout
    done = loom(["resume", "--help"], Path.cwd(), None)
    assert "Usage: loom resume [OPTIONS] [REF]" in done.stdout
