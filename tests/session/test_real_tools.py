"""The session with the real built-in tools and permission policy: the agent reads and
edits a file and runs a command; auto-approve never covers a dangerous command."""

from __future__ import annotations

import asyncio

from loom.llm.scripted import ScriptedProvider, tool_turn
from loom.session import SessionSpec
from tests.support.sessions import make_workspace


async def test_read_edit_run_with_built_in_tools(tmp_path) -> None:
    (tmp_path / "app.py").write_text("print('hello')\n")
    provider = ScriptedProvider(
        [
            tool_turn("file_read", {"path": "app.py"}, id="r"),
            tool_turn(
                "file_edit",
                {"path": "app.py", "old_string": "hello", "new_string": "bye"},
                id="e",
            ),
            tool_turn("shell", {"command": "python3 app.py"}, id="s"),
            "Changed the greeting.",
        ]
    )
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(SessionSpec(auto_approve=True))  # the built-ins
    assert await session.send_message("say bye") == "Changed the greeting."
    assert (tmp_path / "app.py").read_text() == "print('bye')\n"
    results = {m.tool_call_id: m for m in session.get_history() if m.role == "tool"}
    assert "hello" in results["r"].content and not results["r"].is_error
    assert not results["e"].is_error
    assert "bye" in results["s"].content
    await ws.shutdown()


async def test_auto_approve_still_asks_before_a_dangerous_command(tmp_path) -> None:
    (tmp_path / "keep.txt").write_text("precious")
    provider = ScriptedProvider([tool_turn("shell", {"command": "rm -rf ."}, id="d"), "ok"])
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(SessionSpec(auto_approve=True))  # the built-ins
    events = session.subscribe()
    turn = asyncio.create_task(session.send_message("clean up"))
    while (event := await events.get(10)).type != "permission_request":
        pass
    assert event.tool_name == "shell" and "dangerous" in event.reason
    session.respond_to_permission("deny")
    assert await turn == "ok"
    assert (tmp_path / "keep.txt").read_text() == "precious"
    await ws.shutdown()
