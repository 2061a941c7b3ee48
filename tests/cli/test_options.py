"""The session options every face understands, on `loom resume` and `loom web`; errors
that list a command's real options; `--help` that reads well at 80 columns (issue 26)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import loom_in_process


def test_resume_takes_model_yes_and_output_format(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="first answer"))
    assert loom_in_process(["run", "-p", "one"], project, server).returncode == 0
    (thread,) = json.loads(loom_in_process(["list", "--json"], project, server).stdout)
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": "touch made"})]))
    server.add(Turn(text="made it"))
    done = loom_in_process(
        ["resume", thread["id"], "-p", "two", "-m", "openai:gpt-5", "-y", "-o", "json"],
        project,
        server,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "made it"
    assert (project / "made").exists()  # --yes: the command ran unasked
    assert [r.format for r in server.requests[-2:]] == ["responses", "responses"]
    assert server.requests[-1].json["model"] == "gpt-5"


@pytest.mark.parametrize(
    ("args", "listed"),
    [
        (["resume", "--modle", "x"], ["-m/--model", "-y/--yes", "-o/--output-format"]),
        (["web", "--bogus"], ["-m/--model", "--no-sandbox", "-p/--port"]),
        (["run", "--yse"], ["-y/--yes", "--include-partial-messages", "-r/--resume"]),
    ],
)
def test_an_unknown_option_lists_the_real_ones(
    project: Path, args: list[str], listed: list[str]
) -> None:
    done = loom_in_process(args, project, None)
    assert done.returncode == 2
    said = " ".join(done.stderr.replace("│", " ").split())
    assert f"No such option: {args[1]}" in said and f"`loom {args[0]}` takes:" in said
    for option in listed:
        assert option in said


def _left_short(lines: list[str]) -> list[str]:
    """Prose lines (outside the option boxes) that end early although the next line's
    first word would have fit: a docstring's line break kept in the middle of a sentence."""
    prose = [line.rstrip() for line in lines if not line.startswith(("│", "╭", "╰"))]
    return [
        a
        for a, b in itertools.pairwise(prose)
        if a.strip() and b.strip() and len(a) + 1 + len(b.split()[0]) <= 78
    ]


def _every_command() -> list[str]:
    """Every command and sub-command of `loom`, as words (`mcp serve`)."""
    from typer.main import get_command

    from loom.cli.app import build_app

    found: list[str] = []

    def walk(command: Any, path: list[str], parent: Any) -> None:
        ctx = command.context_class(command, info_name=path[-1] if path else "loom", parent=parent)
        if path:
            found.append(" ".join(path))
        for name in command.list_commands(ctx) if hasattr(command, "list_commands") else []:
            walk(command.get_command(ctx, name), [*path, name], ctx)

    walk(get_command(build_app()), [], None)
    return found


@pytest.mark.parametrize("command", _every_command())
def test_help_has_no_type_tags_and_whole_names_at_80_columns(project: Path, command: str) -> None:
    done = loom_in_process([*command.split(), "--help"], project, None, COLUMNS="80")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "<bool>" not in done.stdout and "<str>" not in done.stdout
    assert "LIST[" not in done.stdout.upper()  # a repeatable option: TEXT, a list: TEXT...
    assert "…" not in done.stdout  # no option name cut short
    assert _left_short(lines) == []
    if command == "run":
        assert "--include-partial-messages" in done.stdout
    if command in ("resume", "web"):
        assert "--model" in done.stdout
    if command == "search":
        assert "TEXT..." in done.stdout  # its words: a list argument


def test_a_run_loads_no_help_rendering(project: Path) -> None:
    # in a fresh process: `loom run` prints no help, so typer's rich help module (and the
    # help tables' adjustments, ~0.15 s of start-up) stay unloaded
    code = (
        "import sys; from loom.cli.app import run_app\n"
        "try: run_app(['run', '-p', 'hi', '--model', 'nosuch:model'])\n"
        "except SystemExit as exit: print(exit.code, 'typer.rich_utils' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["1", "False"]
    assert "Unknown provider 'nosuch'" in done.stderr
