"""The session options every face understands, on `loom resume` and `loom web`; errors
that list a command's real options; `--help` that reads well at 80 columns (issue 26)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    assert [r.format for r in server.requests[-2:]] == ["openai", "openai"]
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


@pytest.mark.parametrize("command", ["run", "resume", "web", "chat"])
def test_help_has_no_type_tags_and_whole_names_at_80_columns(project: Path, command: str) -> None:
    done = loom_in_process([command, "--help"], project, None, COLUMNS="80")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "<bool>" not in done.stdout and "<str>" not in done.stdout
    assert "…" not in done.stdout  # no option name cut short
    if command == "run":
        assert "--include-partial-messages" in done.stdout
    if command in ("resume", "web"):
        assert "--model" in done.stdout


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
