"""Servers that crash, hang, talk nonsense or are missing: a clear message, no crash."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from loom.lsp.client import LspClient
from loom.lsp.supervisor import LspSupervisor
from loom.lsp.tools import lsp_tools
from loom.tools.base import ToolContext, ToolError
from loom.tools.services import ToolServices

FAKE = str(Path(__file__).with_name("fake_lsp.py"))


def fake(mode: str) -> list[str]:
    return [sys.executable, FAKE, mode]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "mod.py").write_text("value = 1\n")
    (tmp_path / "notes.txt").write_text("plain text\n")
    (tmp_path / "app.rb").write_text("puts 1\n")
    return tmp_path


async def run_tool(supervisor: LspSupervisor, name: str, args: dict) -> str:
    tools = {t.name: t for t in lsp_tools(supervisor.root)}
    ctx = ToolContext(
        project_root=supervisor.root, services=ToolServices(lsp_supervisor=supervisor)
    )
    return (await tools[name].run(args, ctx)).content


async def test_working_server_diagnostics_hover_and_shutdown(project: Path) -> None:
    supervisor = LspSupervisor(project, {"python": fake("ok")}, request_timeout=10)
    try:
        out = await run_tool(supervisor, "lsp_diagnostics", {"path": "mod.py"})
        assert out == "mod.py:1:1: warning: fake warning"
        only_errors = await run_tool(
            supervisor, "lsp_diagnostics", {"path": "mod.py", "severity": "error"}
        )
        assert "no problems" in only_errors
        hover = await run_tool(
            supervisor, "lsp_hover", {"path": "mod.py", "line": 1, "symbol": "value"}
        )
        assert hover == "fake hover"
        client = await supervisor.client_for(project / "mod.py")
        assert supervisor.running() == ["python"]
        client.close_document(project / "mod.py")  # didClose; the next use opens it again
        again = await client.diagnostics(project / "mod.py", "value = 2\n", timeout=10)
        assert [d["message"] for d in again] == ["fake warning"]
    finally:
        await supervisor.aclose()
    assert client.process is not None and client.process.returncode is not None
    assert supervisor.running() == []


async def test_server_that_never_answers_times_out(project: Path) -> None:
    supervisor = LspSupervisor(project, {"python": fake("silent")}, request_timeout=0.5)
    try:
        with pytest.raises(ToolError, match=r"did not answer initialize within"):
            await run_tool(supervisor, "lsp_hover", {"path": "mod.py", "line": 1, "column": 1})
    finally:
        await supervisor.aclose()


async def test_server_that_crashes_is_reported_and_restarted(project: Path) -> None:
    supervisor = LspSupervisor(project, {"python": fake("crash-later")}, request_timeout=10)
    try:
        for _attempt in range(2):  # each call restarts the dead server
            with pytest.raises(ToolError, match=r"exited with code 3.*segmentation fault"):
                await run_tool(
                    supervisor, "lsp_definition", {"path": "mod.py", "line": 1, "symbol": "value"}
                )
        with pytest.raises(ToolError, match="exited"):
            await run_tool(
                supervisor, "lsp_definition", {"path": "mod.py", "line": 1, "symbol": "value"}
            )
        with pytest.raises(ToolError, match=r"crashed 3 times"):
            await run_tool(
                supervisor, "lsp_definition", {"path": "mod.py", "line": 1, "symbol": "value"}
            )
    finally:
        await supervisor.aclose()


async def test_server_that_dies_at_start_or_talks_nonsense(project: Path) -> None:
    for mode, pattern in (("crash-start", "missing runtime"), ("garbage", "malformed message")):
        supervisor = LspSupervisor(project, {"python": fake(mode)}, request_timeout=5)
        try:
            with pytest.raises(ToolError, match=pattern):
                await run_tool(supervisor, "lsp_diagnostics", {"path": "mod.py"})
        finally:
            await supervisor.aclose()


async def test_no_server_for_the_file_says_what_to_do(project: Path) -> None:
    supervisor = LspSupervisor(project, {"python": fake("ok")})
    with pytest.raises(ToolError, match=r"no language server is configured for ruby.*\[lsp\]"):
        await run_tool(supervisor, "lsp_diagnostics", {"path": "app.rb"})
    with pytest.raises(ToolError, match="does not know what language"):
        await run_tool(supervisor, "lsp_diagnostics", {"path": "notes.txt"})
    missing = LspSupervisor(project, {"python": ["no-such-langserver-xyz", "--stdio"]})
    with pytest.raises(ToolError, match="is not installed"):
        await run_tool(missing, "lsp_diagnostics", {"path": "mod.py"})
    off = LspSupervisor(project, {"python": fake("ok")}, enabled=False)
    with pytest.raises(ToolError, match="switched off"):
        await run_tool(off, "lsp_diagnostics", {"path": "mod.py"})


async def test_bad_positions_and_paths_are_explained(project: Path) -> None:
    supervisor = LspSupervisor(project, {"python": fake("ok")}, request_timeout=10)
    try:
        with pytest.raises(ToolError, match="past the end of the file"):
            await run_tool(supervisor, "lsp_hover", {"path": "mod.py", "line": 99, "column": 1})
        with pytest.raises(ToolError, match="does not occur on line 1"):
            await run_tool(
                supervisor, "lsp_hover", {"path": "mod.py", "line": 1, "symbol": "nothere"}
            )
        with pytest.raises(ToolError, match="does not exist"):
            await run_tool(supervisor, "lsp_diagnostics", {"path": "missing.py"})
        with pytest.raises(ToolError, match="outside the project"):
            await run_tool(supervisor, "lsp_diagnostics", {"path": "/etc/passwd"})
    finally:
        await supervisor.aclose()


async def test_client_start_reports_a_missing_executable(tmp_path: Path) -> None:
    client = LspClient(["definitely-not-installed-ls"], tmp_path, "python")
    with pytest.raises(Exception, match="is not installed"):
        await client.start()


async def test_a_private_folder_that_cannot_be_made_is_one_clear_line(
    project: Path, tmp_path: Path
) -> None:
    from loom.lsp.launch import ServerLaunch

    blocker = tmp_path / "cache-is-a-file"
    blocker.write_text("")
    launch = ServerLaunch(project.resolve(), blocker / "lsp" / "home")
    supervisor = LspSupervisor(project, {"python": fake("ok")}, launch=launch)
    try:
        with pytest.raises(ToolError) as failed:
            await run_tool(supervisor, "lsp_diagnostics", {"path": "mod.py"})
    finally:
        await supervisor.aclose()
    said = str(failed.value)
    assert said.startswith("cannot prepare the language server's own folder")
    assert "check that Loom's cache folder is writable" in said
