"""A lifecycle hook runs in the project folder, which a sandboxed command can write: a
command plants `PKG.py` there, and the person's `python -m PKG` hook that fires next (on
the host) must not import it."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from loom.config import load_config
from loom.llm.scripted import ScriptedProvider, tool_turn
from loom.session import SessionSpec, Workspace
from tests.support.config_files import user_config
from tests.support.sandbox import require_sandbox

PKG = "loom_probe_formatter"


async def test_a_python_m_hook_does_not_import_a_module_a_command_planted(
    project: Path, tmp_path: Path
) -> None:
    require_sandbox()
    marker = tmp_path / "planted-module-ran"  # outside every folder a command may write
    planted = f"open({str(marker)!r}, 'w').write('ran on the host')\n"
    hook = shlex.join([sys.executable, "-m", PKG])
    user_config(f'[[hooks.PostToolUse]]\nmatcher = "shell"\ncommand = {json.dumps(hook)}\n')
    plant = f"printf %s {shlex.quote(planted)} > {PKG}.py && echo planted"
    provider = ScriptedProvider([tool_turn("shell", {"command": plant}), "ok"])
    ws = Workspace(load_config(project), provider_factory=lambda model: provider)
    try:
        session = await ws.start_session(SessionSpec(cwd=project, auto_approve=True))
        assert await session.send_message("format") == "ok"
    finally:
        await ws.shutdown()
    assert (project / f"{PKG}.py").exists()  # the command did plant it
    assert not marker.exists()


async def test_a_relative_path_entry_never_finds_a_program_in_the_project(
    project: Path, tmp_path: Path, monkeypatch
) -> None:
    """The person's PATH holds `.` (or an empty entry): a hook's bare `fmt` would be a
    `./fmt` a command left in the project."""
    from loom.hooks import run_hook

    marker = tmp_path / "planted-program-ran"
    program = project / "loom-probe-fmt"
    program.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(marker))}\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f".:{Path(sys.executable).parent}:/usr/bin:/bin")
    run = await run_hook("loom-probe-fmt", b"{}", cwd=project, timeout=10)
    assert run.exit_code == 127 and not marker.exists()
