"""`loom acp` driven by the ACP SDK's client side, against the fake LLM server."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from acp.schema import TextContentBlock

from acp import PROTOCOL_VERSION, RequestError
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.acp import RecordingClient, acp_agent
from tests.support.loom_cli import loom
from tests.support.mcp import BAD_SERVER, define_helper_server

pytestmark = pytest.mark.asyncio


async def start(conn, project: Path) -> str:
    init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
    assert init.protocol_version == PROTOCOL_VERSION
    caps = init.agent_capabilities
    assert caps.load_session and caps.prompt_capabilities.embedded_context
    assert caps.mcp_capabilities.http
    assert init.agent_info.name == "loom"
    new = await conn.new_session(cwd=str(project), mcp_servers=[])
    assert new.modes.current_mode_id == "normal"
    assert {m.id for m in new.modes.available_modes} == {"normal", "architect"}
    return new.session_id


def text_block(text: str) -> TextContentBlock:
    from acp import text_block as block

    return block(text)


async def test_read_then_edit_with_permission_allowed_once(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(
        Turn(text="Reading. ", tool_calls=[FakeToolCall("file_read", {"path": "notes.txt"})]),
        Turn(tool_calls=[FakeToolCall("file_edit", {
            "path": "notes.txt", "old_string": "one", "new_string": "two"})]),
        Turn(text="Changed it."),
    )  # fmt: skip
    client = RecordingClient(answers=["allow_once"])
    async with acp_agent(server, project, client) as (conn, _process):
        session_id = await start(conn, project)
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("edit notes")])
        assert reply.stop_reason == "end_turn"
    assert (project / "notes.txt").read_text() == "two\n"
    ((sid, call, options),) = client.permission_requests
    assert sid == session_id and call.kind == "edit" and call.status == "pending"
    assert {o.kind for o in options} == {"allow_once", "allow_always", "reject_once",
                                         "reject_always"}  # fmt: skip
    (diff,) = call.content
    assert diff.type == "diff" and diff.old_text == "one\n" and diff.new_text == "two\n"
    kinds = client.kinds(session_id)
    assert kinds[0] == "agent_message_chunk" and "usage_update" in kinds
    calls = [u for _, u in client.updates if u.session_update in ("tool_call", "tool_call_update")]
    read_id = calls[0].tool_call_id
    assert calls[0].session_update == "tool_call" and calls[0].kind == "read"
    statuses = [u.status for u in calls if u.tool_call_id == read_id]
    assert statuses == ["pending", "in_progress", "completed"]
    edit = [u for u in calls if u.tool_call_id != read_id]
    assert [u.status for u in edit] == ["pending", "in_progress", "completed"]
    assert edit[-1].content[0].type == "diff"
    assert client.text(session_id) == "Reading. Changed it."
    thread = json.loads(thread_path(session_id).read_text())
    assert [m["role"] for m in thread["conversation"]["messages"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]


def thread_path(thread_id: str) -> Path:
    return Path(os.environ["LOOM_HOME"]) / "data" / "threads" / f"{thread_id}.json"


async def test_reject_once_leaves_the_file_and_tells_the_model(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(
        Turn(tool_calls=[FakeToolCall("file_write", {"path": "new.txt", "content": "x"})]),
        Turn(text="Understood, not writing."),
    )
    client = RecordingClient(answers=["reject_once"])
    async with acp_agent(server, project, client) as (conn, _process):
        session_id = await start(conn, project)
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("write")])
    assert reply.stop_reason == "end_turn"
    assert not (project / "new.txt").exists()
    failed = [u for _, u in client.updates
              if u.session_update == "tool_call_update" and u.status == "failed"]  # fmt: skip
    assert failed, "the refused call ends failed"
    request = server.requests[-1].json
    assert "denied" in json.dumps(request["messages"]).lower()


async def test_cancel_mid_turn_returns_cancelled_and_saves(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(text="slow answer", delay=30))
    client = RecordingClient()
    async with acp_agent(server, project, client) as (conn, _process):
        session_id = await start(conn, project)
        turn = asyncio.create_task(conn.prompt(session_id=session_id, prompt=[text_block("go")]))
        await asyncio.sleep(1.0)
        await conn.cancel(session_id=session_id)
        reply = await asyncio.wait_for(turn, 20)
        assert reply.stop_reason == "cancelled"
    thread = json.loads(thread_path(session_id).read_text())
    assert thread["conversation"]["messages"][0]["content"] == "go"


async def test_a_refusal_by_the_model_ends_the_turn_as_refusal(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(text="I can't help with that.", stop_reason="refusal"), Turn(text="Sure."))
    client = RecordingClient()
    async with acp_agent(server, project, client) as (conn, _process):
        session_id = await start(conn, project)
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("do it")])
        assert reply.stop_reason == "refusal"
        assert "I can't help with that." in client.text(session_id)
        # the session goes on: the next prompt is an ordinary turn
        again = await conn.prompt(session_id=session_id, prompt=[text_block("something else")])
        assert again.stop_reason == "end_turn"


async def test_load_replays_a_thread_made_by_loom_run(server: FakeLlmServer, project: Path) -> None:
    server.add(
        Turn(tool_calls=[FakeToolCall("file_read", {"path": "notes.txt"})]),
        Turn(text="It says one."),
    )
    done = loom(["run", "-p", "what does notes say?", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    thread_id = json.loads(done.stdout)["thread_id"]
    client = RecordingClient()
    async with acp_agent(server, project, client) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        listed = await conn.list_sessions(cwd=str(project))
        assert thread_id in [s.session_id for s in listed.sessions]
        await conn.load_session(cwd=str(project), session_id=thread_id, mcp_servers=[])
        kinds = client.kinds(thread_id)
        assert kinds[:4] == ["user_message_chunk", "tool_call", "tool_call_update",
                             "agent_message_chunk"]  # fmt: skip
        assert client.text(thread_id) == "It says one."
        server.add(Turn(text="Still one."))
        reply = await conn.prompt(session_id=thread_id, prompt=[text_block("again?")])
        assert reply.stop_reason == "end_turn"
    thread = json.loads(thread_path(thread_id).read_text())
    assert thread["conversation"]["messages"][-1]["content"] == "Still one."


async def test_two_sessions_at_once_in_one_process(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(text="first", delay=0.5), Turn(text="second", delay=0.5))
    client = RecordingClient()
    async with acp_agent(server, project, client) as (conn, _process):
        a = await start(conn, project)
        b = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        assert a != b
        replies = await asyncio.gather(
            conn.prompt(session_id=a, prompt=[text_block("one")]),
            conn.prompt(session_id=b, prompt=[text_block("two")]),
        )
    assert [r.stop_reason for r in replies] == ["end_turn", "end_turn"]
    assert sorted([client.text(a), client.text(b)]) == ["first", "second"]


async def test_bad_requests_are_errors_and_the_process_lives(
    server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    client = RecordingClient()
    async with acp_agent(server, project, client) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        with pytest.raises(RequestError) as missing:
            await conn.new_session(cwd=str(tmp_path / "nope"), mcp_servers=[])
        assert "does not exist" in json.dumps(missing.value.data)
        with pytest.raises(RequestError) as root:  # a root or home folder is no project
            await conn.new_session(cwd="/", mcp_servers=[])
        assert "root of the file system, not a project folder" in json.dumps(root.value.data)
        with pytest.raises(RequestError) as unknown:
            await conn.prompt(session_id="T-unknown", prompt=[text_block("hi")])
        assert "no session" in json.dumps(unknown.value.data)
        with pytest.raises(RequestError) as method:
            await conn.ext_method("nothing", {})
        assert method.value.code == -32601
        # raw garbage on the wire: the agent answers with a parse error and lives on
        process.stdin.write(b"{not json\n")
        process.stdin.write(b'{"jsonrpc":"2.0","id":99,"method":"no/such","params":{}}\n')
        await process.stdin.drain()
        session_id = await start(conn, project)
        server.add(Turn(text="alive"))
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("still there?")])
        assert reply.stop_reason == "end_turn"
        assert process.returncode is None


async def test_a_batch_or_a_bare_value_on_a_line_does_not_end_the_agent(
    server: FakeLlmServer, project: Path
) -> None:
    # A JSON array line (a JSON-RPC batch) made the SDK raise and `loom acp` exit: every
    # session of the editor was lost.
    client = RecordingClient()
    async with acp_agent(server, project, client) as (conn, process):
        session_id = await start(conn, project)
        for line in (
            b'[{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"T-x"}}]\n',
            b"[]\n",
            b"[1, 2]\n",
            b"42\n",
            b'"hello"\n',
            b"null\n",
        ):
            process.stdin.write(line)
        await process.stdin.drain()
        server.add(Turn(text="still here"))
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("are you there?")])
        assert reply.stop_reason == "end_turn"
        assert client.text(session_id) == "still here"
        assert process.returncode is None


async def test_file_tools_go_through_the_editor_when_it_offers(
    server: FakeLlmServer, project: Path
) -> None:
    from acp.schema import ClientCapabilities, FileSystemCapabilities

    server.add(
        Turn(tool_calls=[FakeToolCall("file_read", {"path": "notes.txt"})]),
        Turn(tool_calls=[FakeToolCall("file_edit", {
            "path": "notes.txt", "old_string": "unsaved", "new_string": "edited"})]),
        Turn(text="done"),
    )  # fmt: skip
    client = EditorClient(buffers={str(project / "notes.txt"): "unsaved buffer\n"})
    async with acp_agent(server, project, client) as (conn, _process):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
            ),
        )
        session_id = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("edit")])
    assert reply.stop_reason == "end_turn"
    assert client.buffers[str(project / "notes.txt")] == "edited buffer\n"
    assert (project / "notes.txt").read_text() == "one\n"  # the editor saves, not Loom
    read_result = server.requests[1].json["messages"]
    assert "unsaved buffer" in json.dumps(read_result)


class EditorClient(RecordingClient):
    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__()
        self.buffers = buffers

    async def read_text_file(self, session_id: str, path: str, **_: object):
        from acp.schema import ReadTextFileResponse

        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **_: object):
        self.buffers[path] = content


async def test_an_mcp_server_given_in_session_new_reaches_the_agent(
    server: FakeLlmServer, project: Path
) -> None:
    import sys

    from acp.schema import McpServerStdio

    server.add(
        Turn(tool_calls=[FakeToolCall("mcp__helper__echo", {"text": "from the editor"})]),
        Turn(text="echoed"),
    )
    client = RecordingClient(answers=["allow_once"])
    async with acp_agent(server, project, client) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        helper = McpServerStdio(name="helper", command=sys.executable, args=[str(BAD_SERVER)],
                                env=[])  # fmt: skip
        session_id = (await conn.new_session(cwd=str(project), mcp_servers=[helper])).session_id
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("echo it")])
    assert reply.stop_reason == "end_turn"
    tools = [t.get("name") for t in server.requests[0].json.get("tools", [])]
    assert "mcp__helper__echo" in tools
    results = json.dumps(server.requests[1].json["messages"])
    assert "echo: from the editor" in results


async def test_the_projects_own_mcp_server_is_trusted_in_the_editor(
    server: FakeLlmServer, project: Path
) -> None:
    fixture = define_helper_server(project)
    server.add(
        Turn(tool_calls=[FakeToolCall("mcp__helper__echo", {"text": "approved"})]),
        Turn(text="echoed"),
        Turn(text="nothing to ask"),
    )
    # the first answer trusts the project, the second allows the echo call
    client = RecordingClient(answers=["allow_always", "allow_once"])
    async with acp_agent(server, project, client) as (conn, _process):
        session_id = await start(conn, project)
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("echo it")])
        assert reply.stop_reason == "end_turn"
        # asked once, before the first turn only
        await conn.prompt(session_id=session_id, prompt=[text_block("again")])
    (_sid, call, options), _echo = client.permission_requests
    assert call.title == "Trust this project's settings?" and call.kind == "execute"
    shown = call.content[0].content.text
    assert "mcpServers.helper: MCP server" in shown and f"{fixture.name}" in shown
    assert [o.kind for o in options] == ["allow_always", "reject_always"]
    # the session was assembled again, trusted, before the first turn: same id
    assert "mcp__helper__echo" in [t["name"] for t in server.requests[0].json["tools"]]
    assert "echo: approved" in json.dumps(server.requests[1].json["messages"])
    assert json.loads((Path(os.environ["LOOM_HOME"]) / "data" / "threads" /
                       f"{session_id}.json").read_text())["id"] == session_id  # fmt: skip
    # trusted for the project: a later session (any face) starts it without asking
    server.add(Turn(text="hi"))
    later = loom(["run", "-p", "hi"], project, server)
    assert later.returncode == 0 and "not started" not in later.stderr, later.stderr
    assert "not trusted" not in later.stderr


async def test_not_trusting_the_project_leaves_its_server_stopped(
    server: FakeLlmServer, project: Path
) -> None:
    define_helper_server(project)
    server.add(Turn(text="without it"), Turn(text="still without it"))
    client = RecordingClient(answers=["reject_always"])
    async with acp_agent(server, project, client) as (conn, _process):
        session_id = await start(conn, project)
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("hi")])
        assert reply.stop_reason == "end_turn"
        other = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await conn.prompt(session_id=other, prompt=[text_block("hi")])  # not asked again
    assert len(client.permission_requests) == 1
    assert not [t for t in server.requests[0].json.get("tools", [])
                if t["name"].startswith("mcp__")]  # fmt: skip
    for sid in (session_id, other):  # each session names what it leaves out, once
        said = client.text(sid)
        assert said.count("ignored mcpServers.helper (.mcp.json)") == 1, said
        assert "you chose not to trust it" in said


async def test_undo_and_redo_as_commands(server: FakeLlmServer, project: Path) -> None:
    server.add(
        Turn(tool_calls=[FakeToolCall("file_write", {"path": "notes.txt", "content": "two\n"})]),
        Turn(text="Rewrote it."),
    )
    client = RecordingClient(answers=["allow_once"])
    async with acp_agent(server, project, client) as (conn, _process):
        session_id = await start(conn, project)
        await conn.prompt(session_id=session_id, prompt=[text_block("rewrite notes")])
        assert (project / "notes.txt").read_text() == "two\n"
        # sent 0.1 s after the session starts: a quick first turn may end before it
        for _ in range(100):
            if any(u.session_update == "available_commands_update" for _, u in client.updates):
                break
            await asyncio.sleep(0.02)
        listed = [u for _, u in client.updates if u.session_update == "available_commands_update"]
        assert {c.name for c in listed[0].available_commands} == {
            "undo",
            "redo",
            "compact",
            "context",
            "shells",
        }
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("/undo")])
        assert reply.stop_reason == "end_turn"
        assert (project / "notes.txt").read_text() == "one\n"
        assert "Restored 1 file(s)" in client.text(session_id)
        await conn.prompt(session_id=session_id, prompt=[text_block("/redo")])
        assert (project / "notes.txt").read_text() == "two\n"
        # a hand edit is only overwritten when the person says so
        (project / "notes.txt").write_text("mine\n")
        client.answers.append("keep")
        await conn.prompt(session_id=session_id, prompt=[text_block("/undo")])
        assert (project / "notes.txt").read_text() == "mine\n"
        assert "your edits to notes.txt are kept" in client.text(session_id)
    assert len(server.requests) == 2  # the commands never reached the model


async def test_the_first_turn_names_the_instruction_files_read(
    server: FakeLlmServer, project: Path
) -> None:
    (project / "AGENTS.md").write_text("Keep answers short.\n")
    server.add(Turn(text="First answer."), Turn(text="Second answer."))
    client = RecordingClient()
    async with acp_agent(server, project, client) as (conn, _process):
        session_id = await start(conn, project)
        for words in ("hi", "again"):
            await conn.prompt(session_id=session_id, prompt=[text_block(words)])
    said = client.text(session_id)
    assert said.startswith("[loom: instructions: AGENTS.md]\n\nFirst answer.")
    assert said.count("instructions: AGENTS.md") == 1  # once, as the REPL's header


async def test_todo_list_is_sent_as_plan_updates(server: FakeLlmServer, project: Path) -> None:
    first = [{"content": "Read notes", "status": "in_progress"},
             {"content": "Summarise", "status": "pending"}]  # fmt: skip
    second = [{"content": "Read notes", "status": "completed"},
              {"content": "Summarise", "status": "in_progress"}]  # fmt: skip
    server.add(
        Turn(tool_calls=[FakeToolCall("todo_write", {"todos": first}, id="t1"),
                         FakeToolCall("file_read", {"path": "notes.txt"}, id="r1")]),
        Turn(tool_calls=[FakeToolCall("todo_write", {"todos": second}, id="t2")]),
        Turn(text="It says one."),
    )  # fmt: skip
    client = RecordingClient()
    async with acp_agent(server, project, client) as (conn, _process):
        session_id = await start(conn, project)
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("summarise")])
        assert reply.stop_reason == "end_turn"
    plans = [u for sid, u in client.updates if u.session_update == "plan"]
    assert [[(e.content, e.status) for e in p.entries] for p in plans] == [
        [(i["content"], i["status"]) for i in first],
        [(i["content"], i["status"]) for i in second],
    ]
    # each call's updates keep its own id: the read answered as itself
    finished = {u.tool_call_id: u.status for sid, u in client.updates
                if u.session_update == "tool_call_update" and u.status}  # fmt: skip
    assert finished == {"t1": "completed", "r1": "completed", "t2": "completed"}


async def test_a_sub_agent_shows_inside_its_task_call_and_asks_through_the_editor(
    server: FakeLlmServer, project: Path
) -> None:
    brief = "Add a line to notes.txt"
    edit = FakeToolCall("file_edit", {"path": "notes.txt", "old_string": "one",
                                      "new_string": "one\ntwo"})  # fmt: skip
    server.add(
        Turn(tool_calls=[FakeToolCall("task", {"description": "extend notes", "prompt": brief},
                                      id="task1")]),
        Turn(text="The helper added it."),
    )  # fmt: skip
    server.for_first_message(brief, Turn(tool_calls=[edit]), Turn(text="added two"))
    client = RecordingClient(answers=["allow_once"])
    async with acp_agent(server, project, client) as (conn, _process):
        session_id = await start(conn, project)
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("extend")])
        assert reply.stop_reason == "end_turn"
    assert (project / "notes.txt").read_text() == "one\ntwo\n"
    ((sid, asked, _options),) = client.permission_requests  # the child's edit, asked here
    assert sid == session_id and asked.kind == "edit"
    task = [
        u
        for s, u in client.updates
        if u.session_update in ("tool_call", "tool_call_update") and u.tool_call_id == "task1"
    ]
    assert task[0].title == "general sub-agent: extend notes" and task[0].kind == "think"
    progress = [c.content.text for u in task if u.status == "in_progress" for c in u.content or []]
    assert any(text.startswith("sub-agent thread T-") for text in progress)
    assert "general: file_edit notes.txt" in progress  # the child's steps, in the call
    assert task[-1].status == "completed"
    done = task[-1].content[0].content.text
    assert done.startswith("added two") and "[sub-agent general, thread T-" in done


async def test_architect_mode_without_a_key_for_its_model_is_refused_in_one_line(
    server: FakeLlmServer, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOM_ARCHITECT_MODEL", "google:gemini-2.5-pro")  # no Gemini key
    client = RecordingClient()
    async with acp_agent(server, project, client) as (conn, process):
        session_id = await start(conn, project)
        with pytest.raises(RequestError) as refused:
            await conn.set_session_mode(session_id=session_id, mode_id="architect")
        said = json.dumps(refused.value.data)
        assert "architect mode cannot start: google:gemini-2.5-pro (model.architect" in said
        assert "No API key for google" in said
        server.add(Turn(text="still in normal mode"))
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("hi")])
        assert reply.stop_reason == "end_turn" and process.returncode is None
        assert server.requests[-1].json["model"] == "claude-sonnet-4-6"


async def test_a_finished_edit_shows_what_the_file_held_before(
    server: FakeLlmServer, project: Path
) -> None:
    """The `completed` update of an edit carries the change itself: the file before the
    edit as old text, also for an edit the editor was never asked about."""
    server.add(
        Turn(tool_calls=[FakeToolCall("file_edit", {
            "path": "notes.txt", "old_string": "one", "new_string": "two"})]),
        Turn(tool_calls=[FakeToolCall("file_edit", {
            "path": "notes.txt", "old_string": "two", "new_string": "three"})]),
        Turn(text="Changed it twice."),
    )  # fmt: skip
    client = RecordingClient(answers=["allow_always"])
    async with acp_agent(server, project, client) as (conn, _process):
        session_id = await start(conn, project)
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("edit notes")])
        assert reply.stop_reason == "end_turn"
    assert (project / "notes.txt").read_text() == "three\n"
    assert len(client.permission_requests) == 1  # the second edit ran unasked
    finished = [
        u.content[0]
        for _, u in client.updates
        if u.session_update == "tool_call_update" and u.status == "completed"
    ]
    assert [(d.type, d.old_text, d.new_text) for d in finished] == [
        ("diff", "one\n", "two\n"),
        ("diff", "two\n", "three\n"),
    ]


async def test_reasoning_is_sent_as_thought_chunks_live_and_on_load(
    server: FakeLlmServer, project: Path
) -> None:
    """ACP `agent_thought_chunk`s carry the model's readable reasoning, as it streams and
    when a thread is loaded; the encrypted part never reaches the editor."""
    (project / "notes.txt").write_text("one\n")
    server.add(
        Turn(thinking="Look at the notes first.",
             tool_calls=[FakeToolCall("file_read", {"path": "notes.txt"})]),
        Turn(thinking="Done looking.", text="It says one."),
    )  # fmt: skip
    client = RecordingClient()
    args = ("-m", "openai:gpt-5", "--effort", "low")
    async with acp_agent(server, project, client, *args) as (conn, _process):
        session_id = await start(conn, project)
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("notes?")])
        assert reply.stop_reason == "end_turn"
    thoughts = [u.content.text for _sid, u in client.updates
                if u.session_update == "agent_thought_chunk"]  # fmt: skip
    assert "".join(thoughts) == "Look at the notes first.Done looking."
    kinds = client.kinds(session_id)
    assert kinds.index("agent_thought_chunk") < kinds.index("tool_call")
    assert [r.json["reasoning"]["effort"] for r in server.requests] == ["low", "low"]
    assert server.requests[-1].json["input"][1]["type"] == "reasoning"  # sent back

    loaded = RecordingClient()
    async with acp_agent(server, project, loaded) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(project), session_id=session_id, mcp_servers=[])
    replayed = [u.content.text for _sid, u in loaded.updates
                if u.session_update == "agent_thought_chunk"]  # fmt: skip
    assert replayed == ["Look at the notes first.", "Done looking."]
    encrypted = server.requests[-1].json["input"][1]["encrypted_content"]
    assert encrypted not in repr(loaded.updates) and encrypted not in repr(client.updates)


async def test_the_permission_mode_is_an_option_and_plan_refuses_a_write(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(
        Turn(tool_calls=[FakeToolCall("file_write", {"path": "new.txt", "content": "x"})]),
        Turn(text="Planned, nothing written."),
    )
    client = RecordingClient()
    async with acp_agent(server, project, client) as (conn, _process):
        session_id = await start(conn, project)
        changed = await conn.set_config_option(
            config_id="permission_mode", session_id=session_id, value="plan"
        )
        (option,) = [o for o in changed.config_options if o.id == "permission_mode"]
        assert option.current_value == "plan"
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("write")])
        with pytest.raises(RequestError):
            await conn.set_config_option(
                config_id="permission_mode", session_id=session_id, value="yolo"
            )
    assert reply.stop_reason == "end_turn"
    assert not (project / "new.txt").exists()
    assert "plan mode" in json.dumps(server.requests[-1].json["messages"])


async def test_background_commands_are_tool_calls_of_their_own(
    server: FakeLlmServer, project: Path
) -> None:
    from tests.support.processes import alive

    quick = FakeToolCall("shell", {"command": "echo hi", "background": True}, id="c1")
    slow = FakeToolCall("shell", {"command": "sleep 31361", "background": True}, id="c2")
    server.add(Turn(tool_calls=[quick, slow]), Turn(text="both started"))
    client = RecordingClient()

    def background(call_id: str) -> list:
        return [u for _, u in client.updates if getattr(u, "tool_call_id", "") == call_id]

    async with acp_agent(server, project, client) as (conn, _process):
        session_id = await start(conn, project)
        await conn.set_config_option(
            config_id="permission_mode", session_id=session_id, value="bypassPermissions"
        )
        reply = await conn.prompt(session_id=session_id, prompt=[text_block("start")])
        assert reply.stop_reason == "end_turn"
        for _ in range(200):  # the quick one's exit may land after the turn's end
            if any(u.status == "completed" for u in background("background-b1")):
                break
            await asyncio.sleep(0.05)
        first, *rest = background("background-b1")
        assert first.session_update == "tool_call" and first.kind == "execute"
        assert first.status == "in_progress" and "echo hi" in first.title
        assert rest[-1].status == "completed" and rest[-1].raw_output["exit_code"] == 0
        (slow_start,) = background("background-b2")
        assert slow_start.status == "in_progress" and alive("31361")
        await conn.prompt(session_id=session_id, prompt=[text_block("/shells")])
        assert "- b1 exited (0)" in client.text(session_id)
        assert "- b2 running" in client.text(session_id)
        await conn.prompt(session_id=session_id, prompt=[text_block("/context")])
        assert "Context window of" in client.text(session_id)
        assert "- messages: " in client.text(session_id)
        await conn.prompt(session_id=session_id, prompt=[text_block("/shells kill b2")])
        assert "[b2 killed: sleep 31361]" in client.text(session_id)
        assert len(server.requests) == 2  # the commands never reached the model
    for _ in range(200):
        if not alive("31361"):
            break
        await asyncio.sleep(0.05)
    assert alive("31361") == []  # the agent's end ended it
