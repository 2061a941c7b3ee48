"""An unusable data folder (a path through a file, a read-only folder): every command
says so in one line naming the folder and what to set, never with a traceback."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer
from tests.support.loom_cli import loom_in_process, provider_env

COMMANDS = [[], ["list"], ["run", "-p", "hi"], ["config"], ["doctor"], ["web"], ["acp"],
            ["resume"], ["search", "x"], ["undo"]]  # fmt: skip


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a) or "loom")
def test_a_home_through_a_file_is_one_line_for_every_command(
    server: FakeLlmServer, project: Path, tmp_path: Path, args: list[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    done = loom_in_process(args, project, server, LOOM_HOME=str(blocker / "home"))
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert line == (
        f"loom: error: Loom's data folder {blocker}/home/data cannot be used ({blocker} is a "
        "file, not a folder); set LOOM_HOME to a folder you can write"
    )


def test_without_loom_home_the_xdg_variable_is_named(
    server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = loom_in_process(["list"], project, server, LOOM_HOME="", XDG_DATA_HOME=str(blocker))
    assert done.returncode == 1
    assert one_line(done.stderr).endswith(
        "set XDG_DATA_HOME (or LOOM_HOME) to a folder you can write"
    )


def test_a_broken_folder_inside_is_one_line_too(
    server: FakeLlmServer, project: Path, loom_home: Path
) -> None:
    (loom_home / "data").mkdir()
    (loom_home / "data" / "threads").write_text("a file where the threads go")
    done = loom_in_process(["list"], project, server)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert f"{loom_home}/data cannot be used" in line and "set LOOM_HOME" in line


def test_a_read_only_home_is_one_line_for_a_command_that_writes(
    server: FakeLlmServer, project: Path, loom_home: Path
) -> None:
    """A read-only mount (as root too, which writes through file modes) of the data
    folder: `loom run` stops in one line; `loom list` reads on (test_threads_cli)."""
    data = loom_home / "data"
    data.mkdir(exist_ok=True)
    loom = " ".join(shlex.quote(part) for part in [sys.executable, "-m", "loom"])
    script = (
        f"mount --bind {data} {data} && mount -o remount,bind,ro {data} && "
        f"{loom} run -p hi; echo exit=$?"
    )
    env = {**os.environ, **provider_env(server)}
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], cwd=project, env=env, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    if "exit=" not in done.stdout:
        pytest.fail(f"no mount namespace here: {done.stderr}")
    assert "exit=1" in done.stdout
    assert one_line(done.stderr) == (
        f"loom: error: Loom's data folder {data} cannot be used (it is read-only); "
        "set LOOM_HOME to a folder you can write"
    )


def test_help_still_answers(project: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = loom_in_process(["--help"], project, None, LOOM_HOME=str(blocker / "home"))
    assert done.returncode == 0 and "Usage" in done.stdout
