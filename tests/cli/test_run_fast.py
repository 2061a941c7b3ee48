"""`loom run` read without Typer (loom.cli.run.fast): the same options, the same run, and
anything unusual left to Typer."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from loom.cli.run import fast as run_fast


def _typer_options() -> tuple[set[str], set[str]]:
    """(names of the options that take a value, names of the flags) of `loom run` as
    the Typer command declares them."""
    from typer.main import get_command

    from loom.cli.app import _register, app

    _register(["loom.cli.run.command"])
    command = get_command(app).commands["run"]  # type: ignore[attr-defined]
    values: set[str] = set()
    flags: set[str] = set()
    for param in command.params:
        (flags if param.is_flag else values).update(param.opts)
    return values, flags


def test_the_fast_reader_knows_exactly_the_typer_commands_options() -> None:
    values, flags = _typer_options()
    assert set(run_fast.VALUE_OPTIONS) == values
    assert set(run_fast.FLAGS) == flags


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The RunOptions each `loom run` hands to run_headless (which runs nothing here)."""
    seen: list[Any] = []

    async def run_headless(options: Any, out: Any, err: Any) -> int:
        seen.append(options)
        return 7

    monkeypatch.setattr("loom.cli.run.headless.run_headless", run_headless)
    monkeypatch.setattr("loom.cli.run.command.run_headless", run_headless)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # piped, empty
    return seen


COMMAND_LINES = [
    ["-p", "say hi"],
    ["-p", "  task  ", "--model", "openai:gpt-5"],
    ["--prompt=task", "--model=openai:gpt-5", "-o", "json", "-y", "--private"],
    ["-p", "t", "--max-turns", "3", "-v", "--include-partial-messages", "-r", "T-1"],
    ["-p", "t", "--architect", "--no-sandbox", "-w", "feature", "--trust"],
    ["-p", "t", "--project-root", "some/folder", "--output-format=stream-json"],
]


@pytest.mark.parametrize("args", COMMAND_LINES)
def test_the_fast_reader_runs_what_typer_would(
    runs: list[Any], args: list[str], tmp_path: Path
) -> None:
    from loom.cli.app import run_app

    assert run_fast.try_fast_run(args) == 7
    with pytest.raises(SystemExit) as typer_exit:
        run_app(["run", *args])
    assert typer_exit.value.code == 7
    fast, typer = runs
    assert fast == typer


def test_without_p_the_task_comes_from_stdin_as_typer_reads_it(
    runs: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from loom.cli.app import run_app

    monkeypatch.setattr("sys.stdin", io.StringIO("  piped task\n"))
    assert run_fast.try_fast_run(["-o", "json"]) == 7
    monkeypatch.setattr("sys.stdin", io.StringIO("  piped task\n"))
    with pytest.raises(SystemExit):
        run_app(["run", "-o", "json"])
    fast, typer = runs
    assert fast == typer and fast.prompt == "piped task"


@pytest.mark.parametrize(
    "args",
    [
        [],  # nothing on stdin either
        ["-p", "-"],
        ["-p", "   "],
        ["-p", "t", "--help"],
        ["-p", "t", "--yse"],  # Typer lists the real options
        ["-p", "t", "-p", "u"],  # repeated
        ["-p", "t", "--model"],  # no value
        ["-p", "t", "-m", "-x"],  # a value that looks like an option
        ["-p", "t", "-o", "yaml"],
        ["-p", "t", "--max-turns", "0"],
        ["-p", "t", "--max-turns", "x"],
        ["-p", "t", "-y=1"],
        ["-p", "t", "--yes=1"],
        ["-pt"],
        ["-p", "t", "extra"],
        ["-p", "t", "--", "-v"],
    ],
)
def test_anything_unusual_is_left_to_typer(runs: list[Any], args: list[str]) -> None:
    assert run_fast.try_fast_run(args) is None
    assert runs == []
