"""Session: turns, tools, events, saving, errors and retries through the real loop."""

from __future__ import annotations

import pytest

from loom.core.messages import AssistantMessage, ToolMessage, UserMessage
from loom.core.thread import AgentStateKind
from loom.llm.base import LlmError
from loom.llm.retry import RetryPolicy
from loom.llm.scripted import ScriptedProvider, ScriptedTurn, tool_call, tool_turn
from loom.session import TurnError
from loom.store.local import LocalThreadStore
from tests.support.sessions import ANY_MODEL, CrashTool, EchoTool, kinds, make_workspace, only


async def test_text_turn_streams_saves_and_returns(tmp_path) -> None:
    provider = ScriptedProvider([ScriptedTurn(text="Hello there, friend.", chunk_size=5)])
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only())
    events = session.subscribe()

    answer = await session.send_message("hi")

    assert answer == "Hello there, friend."
    seen = events.drain()
    # the person's message, then thinking (Claude Code's order)
    assert kinds(seen)[:2] == ["new_message", "session_status"] and seen[1].status == "thinking"
    deltas = [e.text for e in seen if e.type == "text_delta"]
    assert "".join(deltas) == answer and len(deltas) == 4
    assert [e.message.role for e in seen if e.type == "new_message"] == ["user", "assistant"]
    assert seen[-1].type == "turn_complete" or seen[-1].type == "session_status"
    assert session.get_status() == "idle"

    saved = LocalThreadStore().load(session.thread.id)
    assert saved is not None
    assert [m.role for m in saved.messages] == ["user", "assistant"]
    assert saved.messages[1].content == answer and saved.messages[1].model == ANY_MODEL
    assert saved.agent_state.kind is AgentStateKind.WAITING_FOR_USER_INPUT
    assert saved.metadata.title == "hi"
    assert saved.provider == "anthropic" and saved.model == "claude-sonnet-4-6"
    # the request carried the system prompt, the message and the model id without prefix
    request = provider.requests[0]
    assert request.model == "claude-sonnet-4-6"
    assert "Loom" in request.system and [m.content for m in request.messages] == ["hi"]
    await ws.shutdown()


async def test_tool_round_trip_records_call_and_result(tmp_path) -> None:
    provider = ScriptedProvider(
        [tool_turn("echo", {"text": "ping"}, text="Let me echo.", id="call_1"), "It said ping."]
    )
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only(EchoTool()))
    events = session.subscribe()

    assert await session.send_message("echo ping") == "It said ping."

    history = session.get_history()
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    assert isinstance(history[1], AssistantMessage)
    assert history[1].tool_calls[0].id == "call_1"
    assert history[2] == ToolMessage(
        tool_call_id="call_1",
        tool_name="echo",
        content="echo: ping",
        id=history[2].id,
        created_at=history[2].created_at,
    )
    seen = events.drain()
    statuses = [e.status for e in seen if e.type == "session_status"]
    assert statuses == ["thinking", "executing_tool", "thinking", "idle"]
    order = [e.type for e in seen if e.type.startswith("tool_")]
    assert order == ["tool_executing", "tool_progress", "tool_complete"]
    complete = next(e for e in seen if e.type == "tool_complete")
    assert (complete.tool_name, complete.result, complete.is_error) == ("echo", "echo: ping", False)
    # the second model call saw the tool result
    assert [m.role for m in provider.requests[1].messages] == ["user", "assistant", "tool"]
    assert [t.name for t in provider.requests[0].tools] == ["echo"]
    saved = LocalThreadStore().load(session.thread.id)
    assert saved is not None
    assert [m.role for m in saved.messages] == ["user", "assistant", "tool", "assistant"]
    await ws.shutdown()


async def test_bad_tool_calls_come_back_to_the_model_as_errors(tmp_path) -> None:
    provider = ScriptedProvider(
        [
            ScriptedTurn(
                tool_calls=[
                    tool_call("nope", {}, id="a"),
                    tool_call("echo", {}, id="b"),
                    tool_call("echo", {"_raw_arguments": "{oops"}, id="c"),
                    tool_call("crash", {}, id="d"),
                ]
            ),
            "Sorry.",
        ]
    )
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only(EchoTool(), CrashTool()))
    events = session.subscribe()
    assert await session.send_message("go") == "Sorry."
    results = {m.tool_call_id: m for m in session.get_history() if isinstance(m, ToolMessage)}
    assert all(m.is_error for m in results.values())
    assert "no tool named 'nope'" in results["a"].content and "echo" in results["a"].content
    assert "missing required argument(s): text" in results["b"].content
    assert "not a JSON object" in results["c"].content
    assert "boom inside the tool" in results["d"].content
    errors = [e for e in events.drain() if e.type == "error"]
    assert [e.origin for e in errors] == ["Tool"]
    await ws.shutdown()


async def test_transient_errors_retry_with_events_then_succeed(tmp_path) -> None:
    busy = LlmError("overloaded", transient=True, status=529, retry_after=0)
    provider = ScriptedProvider([ScriptedTurn(error=busy), ScriptedTurn(error=busy), "Finally."])
    ws = make_workspace(tmp_path, provider, retry=RetryPolicy(max_retries=3, base_delay=0))
    session = await ws.start_session(only())
    events = session.subscribe()
    assert await session.send_message("hi") == "Finally."
    retries = [e for e in events.drain() if e.type == "llm_retry"]
    assert [(r.attempt, r.delay_seconds) for r in retries] == [(1, 0.0), (2, 0.0)]
    assert "overloaded" in retries[0].error
    assert len(provider.requests) == 3
    await ws.shutdown()


async def test_retries_are_bounded_and_permanent_errors_end_the_turn(tmp_path) -> None:
    busy = LlmError("503 unavailable", transient=True, retry_after=0)
    denied = LlmError("401 invalid x-api-key", transient=False, status=401)
    provider = ScriptedProvider(
        [ScriptedTurn(error=busy)] * 3 + [ScriptedTurn(error=denied), "Back again."]
    )
    ws = make_workspace(tmp_path, provider, retry=RetryPolicy(max_retries=2, base_delay=0))
    session = await ws.start_session(only())
    events = session.subscribe()

    with pytest.raises(TurnError, match="503 unavailable"):
        await session.send_message("one")
    assert len(provider.requests) == 3  # the first try and two retries
    with pytest.raises(TurnError, match="401 invalid"):
        await session.send_message("two")
    assert len(provider.requests) == 4  # permanent: no retry
    errors = [e for e in events.drain() if e.type == "error"]
    assert [e.origin for e in errors] == ["Llm", "Llm"]
    saved = LocalThreadStore().load(session.thread.id)
    assert saved is not None
    assert saved.agent_state.kind is AgentStateKind.ERROR
    assert saved.agent_state.last_error is not None
    assert "401" in saved.agent_state.last_error
    # the session goes on
    assert await session.send_message("three") == "Back again."
    assert [m.content for m in session.get_history() if isinstance(m, UserMessage)] == [
        "one",
        "two",
        "three",
    ]
    await ws.shutdown()


async def test_usage_and_cost_are_tracked_per_session(tmp_path) -> None:
    from loom.core.messages import Usage

    usage = Usage(input_tokens=1000, output_tokens=500)
    provider = ScriptedProvider([ScriptedTurn(text="a", usage=usage)] * 2)
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only())
    await session.send_message("one")
    await session.send_message("two")
    assert (session.usage.input_tokens, session.usage.output_tokens) == (2000, 1000)
    # claude-sonnet-4-6 is priced in the catalog
    assert session.usage.cost_usd is not None
    assert session.usage.cost_usd > 0
    answer = session.get_history()[-1]
    assert isinstance(answer, AssistantMessage) and answer.usage is not None
    assert answer.usage.cost_usd is not None and answer.usage.cost_usd > 0
    await ws.shutdown()


async def test_update_model_validates_and_switches(tmp_path) -> None:
    a, b = ScriptedProvider(["from a"]), ScriptedProvider(["from b"])
    ws = make_workspace(tmp_path, providers={ANY_MODEL: a, "openai:gpt-4o": b})
    session = await ws.start_session(only())
    with pytest.raises(ValueError, match="provider:model-id"):
        session.update_model("gpt-4o")
    session.update_model("openai:gpt-4o")
    assert await session.send_message("hi") == "from b"
    assert b.requests[0].model == "gpt-4o"
    assert (session.thread.provider, session.thread.model) == ("openai", "gpt-4o")
    answer = session.get_history()[-1]
    assert isinstance(answer, AssistantMessage) and answer.model == "openai:gpt-4o"
    await ws.shutdown()


async def test_modes_and_empty_messages(tmp_path) -> None:
    ws = make_workspace(tmp_path, ScriptedProvider([]))
    session = await ws.start_session(only())
    events = session.subscribe()
    session.set_mode("architect")
    assert session.get_mode() == "architect"
    session.set_mode("architect")  # no change, no event
    session.set_mode("normal")
    assert [(e.type, e.mode) for e in events.drain()] == [
        ("mode_changed", "architect"),
        ("mode_changed", "normal"),
    ]
    with pytest.raises(ValueError, match="unknown mode"):
        session.set_mode("turbo")
    with pytest.raises(ValueError, match="empty"):
        await session.send_message("   ")
    await ws.shutdown()


async def test_running_out_of_script_is_a_clear_error(tmp_path) -> None:
    ws = make_workspace(tmp_path, ScriptedProvider([]))
    session = await ws.start_session(only())
    with pytest.raises(TurnError, match="no response left"):
        await session.send_message("hi")
    await ws.shutdown()


async def test_a_failed_save_is_reported_and_retried_without_losing_anything(tmp_path) -> None:
    class FlakyStore(LocalThreadStore):
        failures = 1

        def save(self, thread) -> None:
            if self.failures:
                self.failures -= 1
                raise OSError(28, "could not save: the disk is full")
            super().save(thread)

    store = FlakyStore()
    ws = make_workspace(tmp_path, ScriptedProvider(["one", "two"]), store=store)
    session = await ws.start_session(only())
    events = session.subscribe()
    assert await session.send_message("first") == "one"
    errors = [e for e in events.drain() if e.type == "error"]
    assert [e.origin for e in errors] == ["Io"] and "disk is full" in errors[0].message
    assert await session.send_message("second") == "two"
    saved = LocalThreadStore().load(session.thread.id)
    assert saved is not None
    assert [m.content for m in saved.messages] == ["first", "one", "second", "two"]
    await ws.shutdown()


async def test_duplicate_or_missing_call_ids_from_a_model_are_made_unique(tmp_path) -> None:
    provider = ScriptedProvider(
        [
            ScriptedTurn(
                tool_calls=[
                    tool_call("echo", {"text": "a"}, id="same"),
                    tool_call("echo", {"text": "b"}, id="same"),
                    tool_call("echo", {"text": "c"}, id=""),
                ]
            ),
            "ok",
        ]
    )
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only(EchoTool()))
    assert await session.send_message("go") == "ok"
    answer = session.get_history()[1]
    assert isinstance(answer, AssistantMessage)
    calls = answer.tool_calls
    ids = [c.id for c in calls]
    assert ids[0] == "same" and len(set(ids)) == 3 and all(ids)
    results = [m for m in session.get_history() if isinstance(m, ToolMessage)]
    assert [r.tool_call_id for r in results] == ids
    assert [r.content for r in results] == ["echo: a", "echo: b", "echo: c"]
    await ws.shutdown()


async def test_a_session_nobody_spoke_to_leaves_no_thread_file(tmp_path) -> None:
    store = LocalThreadStore()
    ws = make_workspace(tmp_path, ScriptedProvider([]), store=store)
    session = await ws.start_session(only(model=ANY_MODEL))
    await ws.stop_session(session.id)
    assert store.list() == []
    assert not store.path_for(session.thread.id).exists()
