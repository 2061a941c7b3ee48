"""The Workspace runs only its own project's threads (issue 34, item 7): the one
check every face goes through (`start_session`), and `Workspace.open(thread=)`, which
opens the thread's project wherever the person is."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from loom.config import load_config
from loom.llm.scripted import ScriptedProvider
from loom.session import SessionSpec, SetupError, Workspace, thread_project


def repo(path: Path, config: str) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / ".loom.toml").write_text(config)
    return path


def scripted(project: Path) -> Workspace:
    return Workspace(load_config(project), provider_factory=lambda _m: ScriptedProvider(["hi"]))


async def made_in(project: Path) -> str:
    ws = scripted(project)
    try:
        session = await ws.start_session(SessionSpec(model="openai:a"))
        await session.send_message("start")
        return session.thread.id
    finally:
        await ws.shutdown()


async def test_a_workspace_refuses_another_projects_thread(tmp_path: Path) -> None:
    a = repo(tmp_path / "a", "[repo]\nmap_tokens = 0\n")
    b = repo(tmp_path / "b", "[repo]\nmap_tokens = 0\n")
    thread_id = await made_in(a)
    ws_b = scripted(b)
    with pytest.raises(SetupError, match=rf"belongs to the project {a}, not this one"):
        await ws_b.resume(thread_id)
    await ws_b.shutdown()
    assert not ws_b.runs_here(str(a)) and ws_b.runs_here(str(b)) and ws_b.runs_here(None)
    (b / "sub").mkdir()
    assert ws_b.runs_here(str(b / "sub"))  # an older thread that recorded a subfolder


async def test_open_for_a_thread_reads_its_projects_configuration(tmp_path: Path) -> None:
    a = repo(tmp_path / "a", "[repo]\nmap_tokens = 123\n")
    b = repo(tmp_path / "b", "[repo]\nmap_tokens = 456\n")
    thread_id = await made_in(a)
    assert thread_project(thread_id) == a.resolve()
    opened = Workspace.open(b, thread=thread_id)
    assert opened.project_root == a.resolve() and opened.config.repo.map_tokens == 123
    assert Workspace.open(b, thread="T-nothing-like-it").project_root == b.resolve()
    (a / ".loom.toml").unlink()
    subprocess.run(["rm", "-rf", str(a)], check=True)
    with pytest.raises(SetupError, match="which no longer exists"):
        Workspace.open(b, thread=thread_id)
