"""Installing Loom the ways the README gives: `scripts/run` in a fresh checkout, and the
built wheel in a clean virtualenv (`uv tool install .` / `pipx install .` do the same).

Both install from uv's cache only (`--offline`): `scripts/setup` filled it when this
checkout was set up, so no test here reaches a package registry.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.llm_wire import Turn

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _checkout(into: Path) -> Path:
    """The repository's tracked files as they are in this work tree (a fresh clone, with
    the changes not yet committed)."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if not source.is_file():
            continue  # deleted in the work tree
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return into


def _offline_env(tmp_path: Path) -> dict[str, str]:
    """uv from this .venv on PATH, set to install from its cache only."""
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "UV_OFFLINE": "1",
        "LOOM_HOME": str(tmp_path / "home"),
    }


def test_scripts_run_installs_only_what_running_needs(tmp_path: Path) -> None:
    checkout = _checkout(tmp_path / "loom")
    # apt-get as a recorder: which system packages would the set-up install?
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    asked = tmp_path / "apt-asked"
    apt = bin_dir / "apt-get"
    apt.write_text(f'#!/bin/sh\necho "$@" >> {asked}\n')
    apt.chmod(apt.stat().st_mode | stat.S_IXUSR)
    env = {
        **_offline_env(tmp_path),
        "PATH": f"{bin_dir}:{Path(sys.executable).parent}:{os.environ['PATH']}",
        "LOOM_CHROMIUM": str(tmp_path / "no-chromium"),  # as on a machine without it
    }

    done = subprocess.run(
        ["scripts/run", "--version"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "loom 0.1.0"
    requested = asked.read_text() if asked.exists() else ""
    assert "chromium" not in requested and "npm" not in requested and "tmux" not in requested
    venv = checkout / ".venv"
    site = next((venv / "lib").glob("python*/site-packages"))
    assert (site / "anthropic").is_dir()  # the runtime set is there
    assert not (site / "pytest").exists() and not (site / "playwright").exists()
    assert not (checkout / "tests/npm/node_modules").exists()
    # one line per phase that had work to do, with the time it took
    assert "setup: [python] creating .venv" in done.stderr
    assert "setup: [python] installing Loom (runtime set)" in done.stderr
    assert "done in" in done.stderr
    # a second run has nothing to do and says nothing
    again = subprocess.run(
        ["scripts/run", "--version"], cwd=checkout, env=env, capture_output=True, text=True
    )
    assert (again.returncode, again.stderr) == (0, "")


def test_the_built_wheel_runs_from_a_clean_virtualenv(tmp_path: Path) -> None:
    checkout = _checkout(tmp_path / "loom")
    env = _offline_env(tmp_path)
    uv = [sys.executable, "-m", "uv"]
    subprocess.run(
        [*uv, "build", "--wheel", "--out-dir", str(tmp_path / "dist"), str(checkout)],
        env=env,
        capture_output=True,
        check=True,
        timeout=300,
    )
    (wheel,) = (tmp_path / "dist").glob("loom-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([*uv, "venv", "-q", str(venv)], env=env, check=True, timeout=120)
    subprocess.run(
        [*uv, "pip", "install", "-q", "--python", str(venv / "bin/python"), str(wheel)],
        env=env,
        check=True,
        timeout=300,
    )
    loom = str(venv / "bin/loom")
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)

    version = subprocess.run([loom, "--version"], env=env, capture_output=True, text=True)
    assert version.stdout.strip() == "loom 0.1.0", version.stderr

    with FakeLlmServer([Turn(text="Hello from the wheel.")]) as server:
        run = subprocess.run(
            [loom, "run", "-m", "openai-compatible:qwen2.5-coder", "-p", "say hello"],
            cwd=project,
            env={**env, "OPENAI_COMPATIBLE_BASE_URL": server.openai_base_url},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert run.returncode == 0, run.stderr
    assert "Hello from the wheel." in run.stdout

    # the sandbox lets commands write the temp folder: make it one the venv is not in
    temp = tmp_path / "temp"
    temp.mkdir()
    check = subprocess.run(
        [loom, "sandbox", "check"],
        cwd=project,
        env={**env, "TMPDIR": str(temp)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    # installed outside the project, Loom's own code is not writable by agent commands
    assert "Loom's own code" not in check.stdout
