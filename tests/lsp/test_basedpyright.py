"""The real thing: basedpyright (installed with Loom, ships its own Node) on a two-file
project, through the tools the agent calls."""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

from loom.lsp.supervisor import LspSupervisor, aclose_project, supervisor_for
from loom.lsp.tools import lsp_tools
from loom.tools.base import ToolContext

SERVER = "basedpyright-langserver"
pytestmark = pytest.mark.skipif(
    not (shutil.which(SERVER) or (Path(sys.executable).parent / SERVER).exists()),
    reason="basedpyright is not installed (scripts/setup installs it)",
)

LIB = '''def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b
'''
MAIN = """from lib import add

label: str = add(1, 2)
print(add(3, 4))
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "lib.py").write_text(LIB)
    (tmp_path / "main.py").write_text(MAIN)
    return tmp_path


async def test_diagnostics_definition_references_hover_across_files(project: Path) -> None:
    tools = {t.name: t for t in lsp_tools(project)}
    ctx = ToolContext(project_root=project)  # the shared per-project supervisor

    async def call(name: str, **args) -> str:
        result = await tools[name].run(args, ctx)
        assert not result.is_error
        return result.content

    try:
        diagnostics = await call("lsp_diagnostics", path="main.py", severity="error")
        assert diagnostics.startswith("main.py:3:14: error:")
        assert '"int" is not assignable to declared type "str"' in diagnostics
        assert "lib.py" not in diagnostics

        definition = await call("lsp_definition", path="main.py", line=4, symbol="add")
        assert definition == "lib.py:1:5  def add(a: int, b: int) -> int:"

        references = await call("lsp_references", path="lib.py", line=1, symbol="add")
        assert references.splitlines() == [
            "lib.py:1:5  def add(a: int, b: int) -> int:",
            "main.py:1:17  from lib import add",
            "main.py:3:14  label: str = add(1, 2)",
            "main.py:4:7  print(add(3, 4))",
        ]
        hover = await call("lsp_hover", path="main.py", line=4, symbol="add")
        assert "def add(" in hover and "Add two whole numbers." in hover

        # Fix the file on disk: the next check sees the new text (didChange).
        (project / "main.py").write_text(MAIN.replace("label: str", "label: int"))
        assert "no problems" in await call("lsp_diagnostics", path="main.py", severity="error")
        supervisor = supervisor_for(project)
        client = await supervisor.client_for(project / "main.py")
    finally:
        await aclose_project(project)
    assert client.process is not None and client.process.returncode is not None


async def test_killed_server_is_restarted_on_next_use(project: Path) -> None:
    supervisor = LspSupervisor(project)  # default servers: basedpyright for Python
    try:
        first = await supervisor.client_for(project / "main.py")
        assert first.process is not None
        os.killpg(first.process.pid, signal.SIGKILL)  # the server and its node child
        await first.process.wait()
        second = await supervisor.client_for(project / "main.py")
        assert second is not first and second.alive
        found = await second.diagnostics(project / "main.py", MAIN)
        assert any(d.get("severity") == 1 for d in found)
    finally:
        await supervisor.aclose()


def test_loom_diagnostics_command(project: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    done = subprocess.run(
        [sys.executable, "-m", "loom", "diagnostics", "main.py", "lib.py", "--severity", "error"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith('main.py:3:14: error: Type "int" is not assignable')
    assert lines[-1] == "lib.py: no problems at severity error or above"
    missing = subprocess.run(
        [sys.executable, "-m", "loom", "diagnostics", "nope.py"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2 and "nope.py does not exist" in missing.stderr
