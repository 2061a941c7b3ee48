"""Supervision and resume: sessions are isolated, a crashed session restarts from its
last save, and a thread left mid-tool by a killed process resumes consistently."""

from __future__ import annotations

import asyncio

import pytest

from loom.core.messages import AssistantMessage, ToolCall, UserMessage
from loom.core.state import INTERRUPTED_RESULT
from loom.core.thread import AgentStateKind, AgentStateSnapshot, Thread
from loom.llm.scripted import ScriptedProvider, tool_turn
from loom.session import NotFound, SetupError, TurnError
from loom.store.local import LocalThreadStore
from tests.support.sessions import CrashTool, EchoTool, HangTool, make_workspace, only
from tests.support.threads import stored


async def test_ten_sessions_one_crashing_one_hanging_tool(tmp_path) -> None:
    providers = {}
    tools = {}
    for n in range(10):
        name = "echo" if n < 8 else ("crash" if n == 8 else "hang")
        providers[n] = ScriptedProvider(
            [
                tool_turn(name, {"text": f"s{n}"}, id=f"c{n}a"),
                tool_turn(name, {"text": f"s{n}-2"}, id=f"c{n}b"),
                f"session {n} done",
            ]
        )
        tools[n] = {"echo": EchoTool, "crash": CrashTool, "hang": HangTool}[name]()

    by_model = {f"openai:model-{n}": provider for n, provider in providers.items()}
    # long enough that a loaded CI machine still runs an echo within it
    ws = make_workspace(tmp_path, providers=by_model, tool_timeout=1.0)
    sessions = []
    for n in range(10):
        sessions.append(await ws.start_session(only(tools[n], model=f"openai:model-{n}")))
    assert len(ws.list_active()) == 10

    answers = await asyncio.gather(*(s.send_message(f"go {n}") for n, s in enumerate(sessions)))

    assert answers == [f"session {n} done" for n in range(10)]
    for n, session in enumerate(sessions):
        results = [m for m in session.get_history() if m.role == "tool"]
        assert len(results) == 2
        if n < 8:
            assert [r.content for r in results] == [f"echo: s{n}", f"echo: s{n}-2"]
        elif n == 8:
            assert all(r.is_error and "boom" in r.content for r in results)
        else:
            assert all(r.is_error and "did not finish" in r.content for r in results)
        saved = LocalThreadStore().load(session.thread.id)
        assert saved is not None
        assert len(saved.messages) == 6
    assert {s.status for s in ws.list_active()} == {"idle"}
    await ws.shutdown()
    assert ws.list_active() == []


async def test_a_crashing_session_restarts_from_its_last_save(tmp_path) -> None:
    crashes = []

    def faulty_hook(session) -> None:
        if not crashes:
            crashes.append(1)
            raise RuntimeError("bug in a post-tools hook")

    provider = ScriptedProvider(["first answer", tool_turn("echo", {"text": "x"}), "third"])
    ws = make_workspace(tmp_path, provider, post_tools_hooks=[faulty_hook])
    other = make_workspace(tmp_path, ScriptedProvider(["unaffected"]))
    session = await ws.start_session(only(EchoTool()))
    bystander = await other.start_session(only())
    events = session.subscribe()

    assert await session.send_message("one") == "first answer"
    with pytest.raises(TurnError, match="restarted from its last saved state") as info:
        await session.send_message("two")
    assert info.value.origin == "Session"
    assert session.restarts == 1
    # the conversation is what was saved, settled: the call has its result, nothing is lost
    history = session.get_history()
    assert [m.role for m in history] == ["user", "assistant", "user", "assistant", "tool"]
    assert [m.role for m in stored(LocalThreadStore(), session.thread.id).messages] == [
        m.role for m in history
    ]
    crash_events = [e for e in events.drain() if e.type == "error" and e.origin == "Session"]
    assert len(crash_events) == 1 and "bug in a post-tools hook" in crash_events[0].message
    # the session takes the next message, and the other session never noticed
    assert await session.send_message("three") == "third"
    assert await bystander.send_message("hi") == "unaffected"
    await ws.shutdown()
    await other.shutdown()


async def test_resume_carries_on_with_the_saved_history(tmp_path) -> None:
    ws = make_workspace(tmp_path, ScriptedProvider([tool_turn("echo", {"text": "a"}), "first"]))
    session = await ws.start_session(only(EchoTool()))
    await session.send_message("one")
    thread_id = session.thread.id
    await ws.stop_session(session.id)
    with pytest.raises(NotFound):
        await ws.stop_session(session.id)
    assert ws.find_session(session.id) is None

    provider = ScriptedProvider(["second"])
    resumed_ws = make_workspace(tmp_path, provider)
    resumed = await resumed_ws.start_session(only(EchoTool(), thread=thread_id))
    assert resumed.id == thread_id and resumed.project_root == tmp_path.resolve()
    assert await resumed.send_message("two") == "second"
    assert [m.role for m in provider.requests[0].messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    saved = LocalThreadStore().load(thread_id)
    assert saved is not None
    assert [m.content for m in saved.messages if m.role == "user"] == ["one", "two"]
    await resumed_ws.shutdown()


async def test_resume_of_a_thread_killed_mid_tool_answers_the_call(tmp_path) -> None:
    # what a process killed while running a tool leaves on disk
    thread = Thread.new(workspace_root=str(tmp_path), provider="anthropic", model="m")
    call = ToolCall(id="c9", tool_name="echo", arguments_json={"text": "x"})
    thread.append(UserMessage(content="do it"))
    thread.append(AssistantMessage(content="", tool_calls=[call]))
    thread.agent_state = AgentStateSnapshot(
        kind=AgentStateKind.EXECUTING_TOOLS, pending_tool_calls=[call]
    )
    LocalThreadStore().save(thread)

    provider = ScriptedProvider(["I will check before retrying."])
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only(EchoTool(), thread=thread.id))
    saved = LocalThreadStore().load(thread.id)
    assert saved is not None
    assert saved.messages[-1].tool_call_id == "c9"
    assert saved.messages[-1].content == INTERRUPTED_RESULT
    assert saved.agent_state.kind is AgentStateKind.WAITING_FOR_USER_INPUT
    assert await session.send_message("continue") == "I will check before retrying."
    assert [m.role for m in provider.requests[0].messages] == ["user", "assistant", "tool", "user"]
    await ws.shutdown()


async def test_resuming_an_unknown_thread_or_a_running_session_is_refused(tmp_path) -> None:
    ws = make_workspace(tmp_path, ScriptedProvider(["saved"]))
    with pytest.raises(SetupError, match="T-does-not-exist"):
        await ws.start_session(only(thread="T-does-not-exist"))
    session = await ws.start_session(only())
    await session.send_message("hi")  # its thread is saved: a second start would resume it
    with pytest.raises(SetupError, match="already running"):
        await ws.start_session(only(thread=session.thread.id))
    with pytest.raises(SetupError, match="provider"):
        await ws.start_session(only(model="claude-sonnet"))
    await ws.shutdown()


async def test_stop_mid_tool_answers_the_call(tmp_path) -> None:
    hang = HangTool()
    ws = make_workspace(
        tmp_path, ScriptedProvider([tool_turn("hang", {}, id="h")]), tool_timeout=None
    )
    session = await ws.start_session(only(hang))
    turn = asyncio.create_task(session.send_message("x"))
    await asyncio.wait_for(hang.started.wait(), 5)
    await ws.stop_session(session.id)
    assert await turn == ""
    saved = LocalThreadStore().load(session.thread.id)
    assert saved is not None
    assert saved.messages[-1].content == INTERRUPTED_RESULT
    with pytest.raises(RuntimeError, match="stopped"):
        await session.send_message("more")


async def test_sessions_start_with_the_configured_options_and_policy(tmp_path) -> None:
    from loom.permissions import Decision
    from loom.session import ActiveSession
    from tests.support.sessions import WriteTool

    config = {
        "model.architect": "openai:gpt-4o",
        "model.editor": "openai:gpt-4o-mini",
        "context.reserved_output_tokens": 1234,
        "shell.timeout": 600,
        "permissions.auto_approve": ["write_file"],
    }
    ws = make_workspace(tmp_path, ScriptedProvider([]), config=config)
    session = await ws.start_session(only(WriteTool(), title="My title"))
    assert session.options.architect_model == "openai:gpt-4o"
    assert session.options.editor_model == "openai:gpt-4o-mini"
    assert session.options.reserved_output_tokens == 1234
    assert session.options.tool_timeout is not None
    assert session.options.tool_timeout >= 600
    # the policy [permissions] configures: a write the config approves runs unasked
    write = session.tools.get("write_file")
    assert session.permissions is not None
    verdict = session.permissions.check(write, {"path": "a.txt", "content": ""})
    assert verdict.decision is Decision.ALLOW
    assert session.thread.metadata.title == "My title"
    assert ws.list_active() == [
        ActiveSession(
            id=session.id,
            thread_id=session.thread.id,
            title="My title",
            status="idle",
            model="anthropic:claude-sonnet-4-6",
            mode="normal",
        )
    ]
    assert ws.find_session(session.id) is session
    await ws.shutdown()


async def test_a_busy_session_does_not_starve_another(tmp_path) -> None:
    from loom.llm.scripted import ScriptedTurn, tool_call
    from tests.support.sessions import NoopTool

    # The busy session would grind for a long time (the quick one answers after a few
    # of its steps); it is interrupted once the quick one has answered, so the check
    # does not depend on how loaded the machine is.
    endless = 3_000
    busy = ScriptedProvider(
        [ScriptedTurn(tool_calls=[tool_call("noop", {}, id=f"n{i}")]) for i in range(endless)]
    )
    quick = ScriptedProvider(["quick done"])
    ws = make_workspace(
        tmp_path, providers={"anthropic:claude-sonnet-4-6": busy}, max_tool_rounds=endless + 1
    )
    other = make_workspace(tmp_path, quick)
    long_session = await ws.start_session(only(NoopTool()))
    short_session = await other.start_session(only())
    long_turn = asyncio.create_task(long_session.send_message("grind"))
    await asyncio.sleep(0)
    assert await short_session.send_message("hi") == "quick done"
    assert not long_turn.done()  # the quick turn did not wait for the long one
    assert long_session.interrupt()
    assert await long_turn == ""
    await ws.shutdown()
    await other.shutdown()


async def test_continue_turn_picks_up_where_a_crash_left_off(tmp_path) -> None:
    # killed after the tool ran but before the model saw its result
    thread = Thread.new(workspace_root=str(tmp_path), provider="anthropic", model="m")
    call = ToolCall(id="c1", tool_name="echo", arguments_json={"text": "x"})
    thread.append(UserMessage(content="echo x"))
    thread.append(AssistantMessage(content="", tool_calls=[call]))
    from loom.core.messages import ToolMessage

    thread.append(ToolMessage(tool_call_id="c1", tool_name="echo", content="echo: x"))
    thread.agent_state = AgentStateSnapshot(kind=AgentStateKind.POST_TOOLS_HOOK)
    LocalThreadStore().save(thread)

    provider = ScriptedProvider(["It echoed x."])
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only(EchoTool(), thread=thread.id))
    assert session.can_continue
    assert await session.continue_turn() == "It echoed x."
    assert [m.role for m in provider.requests[0].messages] == ["user", "assistant", "tool"]
    assert not session.can_continue
    assert await session.continue_turn() == ""  # nothing left to carry on
    saved = LocalThreadStore().load(thread.id)
    assert saved is not None
    assert saved.messages[-1].content == "It echoed x."
    await ws.shutdown()


async def test_continue_after_an_interrupted_model_call(tmp_path) -> None:
    from loom.llm.scripted import ScriptedTurn

    provider = ScriptedProvider(
        [ScriptedTurn(text="slow " * 50, chunk_size=2, chunk_delay=0.01), "second try"]
    )
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only())
    events = session.subscribe()
    turn = asyncio.create_task(session.send_message("question"))
    while (await events.get(5)).type != "text_delta":
        pass
    session.interrupt()
    assert await turn == ""
    assert session.can_continue
    assert await session.continue_turn() == "second try"
    # the cut-off words stay in the thread, marked; the model was asked again without them
    history = session.get_history()
    assert [(m.role, getattr(m, "stop_reason", None)) for m in history] == [
        ("user", None), ("assistant", "interrupted"), ("assistant", "end_turn")]  # fmt: skip
    assert "slow ".startswith(history[1].content)  # the deltas shown before the interrupt
    await ws.shutdown()
