"""The Workspace as faces use it, in process: many sessions at once, extra tools,
session cleanups, the history sub-API and the errors a person sees."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from pathlib import Path

import pytest

from loom.config import load_config
from loom.llm.scripted import ScriptedProvider, tool_turn
from loom.session import BadInput, NotFound, SessionSpec, SetupError, Workspace
from tests.support.sessions import EchoTool


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".loom.toml").write_text("[repo]\nmap_tokens = 0\n")
    return root


def workspace_for(project: Path, providers: dict[str, ScriptedProvider]) -> Workspace:
    return Workspace(load_config(project), provider_factory=lambda model: providers[model])


async def test_two_sessions_at_once_each_with_its_own_tools(project: Path) -> None:
    first = ScriptedProvider([tool_turn("echo", {"text": "one"}), "first done"])
    second = ScriptedProvider(["second done"])
    ws = workspace_for(project, {"openai:a": first, "openai:b": second})
    try:
        a = await ws.start_session(
            SessionSpec(model="openai:a", auto_approve=True, extra_tools=[EchoTool()])
        )
        b = await ws.start_session(SessionSpec(model="openai:b", title="the second"))
        assert "echo" in a.tools and "echo" not in b.tools
        assert {"file_read", "shell", "repo_map", "lsp_diagnostics"} <= set(b.tools.names())
        answers = await asyncio.gather(a.send_message("go"), b.send_message("go"))
        assert answers == ["first done", "second done"]
        assert a.get_history()[2].content == "echo: one"
        active = {s.id: s for s in ws.list_active()}
        assert active[b.id].title == "the second" and active[a.id].model == "openai:a"
        assert ws.find_session(a.id) is a and ws.find_session("nope") is None

        closed: list[str] = []
        ws.on_close(a.id, lambda: closed.append("sync"))

        async def async_cleanup() -> None:
            closed.append("async")

        ws.on_close(a.id, async_cleanup)
        await ws.stop_session(a.id)
        assert closed == ["async", "sync"]  # last registered first
        assert [s.id for s in ws.list_active()] == [b.id]
        with pytest.raises(NotFound, match="list them with list_active"):
            await ws.stop_session(a.id)
    finally:
        await ws.shutdown()
    assert ws.list_active() == []
    # both threads were saved, and the history sub-API sees them
    listed = {t.id: t for t in ws.threads.list()}
    assert {a.thread.id, b.thread.id} <= listed.keys()
    assert listed[b.thread.id].title == "the second"


async def test_starting_a_session_leaves_the_event_loop_free(project: Path) -> None:
    """The provider is built on a worker thread (an SDK import: seconds on a cold start)
    and start_session awaits it, so a long-lived face's other sessions keep streaming."""
    loop_ran = threading.Event()

    def factory(model: str) -> ScriptedProvider:
        if not loop_ran.wait(10):  # a guard against hanging, not a timing check
            raise RuntimeError("start_session held the event loop while the provider was built")
        return ScriptedProvider(["ok"])

    async def another_sessions_work() -> None:
        loop_ran.set()

    ws = Workspace(load_config(project), provider_factory=factory)
    try:
        other = asyncio.get_running_loop().create_task(another_sessions_work())
        session = await ws.start_session(SessionSpec(model="openai:a"))
        await other
        assert await session.send_message("hi") == "ok"
    finally:
        await ws.shutdown()


async def test_resume_keeps_the_threads_model_and_history(project: Path) -> None:
    ws = workspace_for(project, {"openai:a": ScriptedProvider(["hello", "again"])})
    try:
        first = await ws.start_session(SessionSpec(model="openai:a"))
        await first.send_message("hi")
        thread_id = first.thread.id
        await ws.stop_session(first.id)
        resumed = await ws.resume(thread_id[:12])  # a unique prefix is enough
        assert resumed.model == "openai:a" and len(resumed.get_history()) == 2
        assert await resumed.send_message("more") == "again"
    finally:
        await ws.shutdown()


async def test_setup_problems_are_loom_errors(project: Path) -> None:
    ws = Workspace(load_config(project))
    try:
        with pytest.raises(SetupError, match="Unknown provider"):
            await ws.start_session(SessionSpec(model="nosuch:model"))
        with pytest.raises(SetupError, match="No API key for openai"):
            await ws.start_session(SessionSpec(model="openai:x"))
    finally:
        await ws.shutdown()
    ws = workspace_for(project, {"openai:x": ScriptedProvider([])})
    try:
        with pytest.raises(SetupError, match="no thread matches"):
            await ws.start_session(SessionSpec(thread="T-0000"))
        with pytest.raises(SetupError, match="already registered"):
            await ws.start_session(
                SessionSpec(model="openai:x", extra_tools=[EchoTool(), EchoTool()])
            )
    finally:
        await ws.shutdown()


async def test_a_given_store_and_session_options_replace_the_configured_ones(
    project: Path,
) -> None:
    """What tests and benches replace goes through the Workspace itself: a thread store
    of their own (saved to, and left open for its owner), and SessionOptions fields set
    over the configured ones; the sessions are otherwise assembled as a face's are."""
    from loom.store.local import LocalThreadStore

    class CountingStore(LocalThreadStore):
        saves = 0
        closed = False

        def save(self, thread) -> None:
            self.saves += 1
            super().save(thread)

        def close(self) -> None:
            self.closed = True

    store = CountingStore()
    provider = ScriptedProvider(["saved here"])
    ws = Workspace(load_config(project), provider_factory=lambda model: provider,
                   store=store, session_options={"tool_timeout": 7.0})  # fmt: skip
    session = await ws.start_session(SessionSpec(model="openai:a", auto_approve=True))
    assert ws.store is store and session.store is store
    assert session.options.tool_timeout == 7.0  # over [shell] timeout's larger one
    assert "shell" in session.tools  # the built-ins, with the sandbox as their launcher
    assert await session.send_message("hi") == "saved here"
    await ws.shutdown()
    assert store.saves >= 1 and store.load(session.thread.id) is not None
    assert not store.closed  # its owner's to close
    with pytest.raises(TypeError, match="no_such_option"):
        Workspace(load_config(project), session_options={"no_such_option": 1})


async def test_threads_api_for_a_face(project: Path) -> None:
    ws = workspace_for(project, {"openai:a": ScriptedProvider(["about parsers"])})
    try:
        session = await ws.start_session(SessionSpec(model="openai:a"))
        await session.send_message("explain the tokenizer")
        await ws.stop_session(session.id)
    finally:
        await ws.shutdown()
    thread_id = session.thread.id
    threads = ws.threads
    assert [hit.summary.id for hit in threads.search("tokenizer")] == [thread_id]
    with pytest.raises(BadInput, match="no words"):
        threads.search("***")
    assert threads.rename(thread_id[:10], "  Tokenizer   talk ").title == "Tokenizer talk"
    assert threads.load(thread_id).title == "Tokenizer talk"
    assert b"## You" in threads.export(thread_id, "markdown")
    assert threads.delete(thread_id) == thread_id and threads.list() == []
    with pytest.raises(NotFound, match="loom list"):
        threads.load(thread_id)
    assert threads.deleted() == [thread_id]
    assert threads.restore(thread_id[:10]) == thread_id
    assert threads.doctor().healthy


async def test_answering_trust_reassembles_what_new_sessions_get(project: Path) -> None:
    (project / ".loom.toml").write_text(
        '[repo]\nmap_tokens = 0\n[permissions]\nauto_approve = ["file_write"]\n'
    )
    write = tool_turn("file_write", {"path": "a.txt", "content": "a"})
    provider = ScriptedProvider([write, "refused", write, "written"])
    ws = Workspace.open(project, provider_factory=lambda model: provider)
    try:
        assert ws.trust.needs_question and ws.config.permissions.auto_approve == []
        session = await ws.start_session(SessionSpec(cwd=project, headless=True))
        await session.send_message("write a")  # headless: the write would ask, so refused
        assert not (project / "a.txt").exists()
        fresh = await ws.start_session(SessionSpec(cwd=project, headless=True))
        ws.answer_trust(True)
        assert ws.config.permissions.auto_approve == ["file_write"]
        with pytest.raises(BadInput, match="started its conversation"):
            await ws.restart_session(session.id)  # it has messages: keeps what it has
        restarted = await ws.restart_session(fresh.id)  # none yet: assembled again
        assert restarted.id == fresh.id and restarted is not fresh
        assert await restarted.send_message("write a") == "written"
        assert (project / "a.txt").read_text() == "a"
    finally:
        await ws.shutdown()
    assert Workspace.open(project).trust.state == "trusted"  # remembered
