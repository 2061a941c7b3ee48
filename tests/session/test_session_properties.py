"""Property test over the live session: whatever a model answers (text, tool calls that
work or crash, transient and permanent errors, in any order), every turn ends with the
thread on disk equal to the history, every call answered right after it, and retries
bounded."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.core.messages import AssistantMessage, ToolMessage
from loom.core.state import unanswered_calls
from loom.llm.base import LlmError
from loom.llm.retry import RetryPolicy
from loom.llm.scripted import ScriptedProvider, ScriptedTurn, tool_call
from loom.session import TurnError
from loom.store.local import LocalThreadStore
from tests.support.sessions import CrashTool, EchoTool, make_workspace, only

MAX_RETRIES = 2

ENTRY = st.one_of(
    st.just("text"),
    st.tuples(
        st.just("tools"),
        st.lists(st.sampled_from(["echo", "crash", "missing"]), min_size=1, max_size=3),
    ),
    st.just("transient"),
    st.just("permanent"),
)


def to_turn(entry, counter: list[int]) -> ScriptedTurn:
    if entry == "text":
        return ScriptedTurn(text="answer")
    if entry == "transient":
        return ScriptedTurn(error=LlmError("503", transient=True, retry_after=0))
    if entry == "permanent":
        return ScriptedTurn(error=LlmError("400 bad request", transient=False))
    calls = []
    for name in entry[1]:
        counter[0] += 1
        calls.append(tool_call(name, {"text": "x"}, id=f"c{counter[0]}"))
    return ScriptedTurn(tool_calls=calls)


def check_pairing(messages) -> None:
    expecting: set[str] = set()
    for message in messages:
        if isinstance(message, ToolMessage):
            assert message.tool_call_id in expecting
            expecting.discard(message.tool_call_id)
        else:
            assert not expecting
            if isinstance(message, AssistantMessage):
                expecting = {c.id for c in message.tool_calls}
    assert not expecting


async def play(entries) -> None:
    counter = [0]
    provider = ScriptedProvider([to_turn(e, counter) for e in entries])
    with tempfile.TemporaryDirectory() as project:
        retry = RetryPolicy(max_retries=MAX_RETRIES, base_delay=0)
        ws = make_workspace(Path(project), provider, retry=retry)
        session = await ws.start_session(only(EchoTool(), CrashTool()))
        for turn in range(len(entries) + 1):
            before_requests = len(provider.requests)
            before_messages = len(session.get_history())
            with contextlib.suppress(TurnError):
                await session.send_message(f"turn {turn}")
            requests = len(provider.requests) - before_requests
            await session.flush()
            history = session.get_history()
            saved = LocalThreadStore().load(session.thread.id)
            assert saved is not None
            assert saved.messages == history
            assert unanswered_calls(history) == []
            check_pairing(history)
            assert session.get_status() == "idle"
            # retries are bounded: each model call is tried at most 1 + MAX_RETRIES times
            rounds = sum(
                1
                for m in history[before_messages:]
                if isinstance(m, AssistantMessage) and m.tool_calls
            )
            assert 1 <= requests <= (rounds + 1) * (MAX_RETRIES + 1)
            if provider.remaining == 0:
                break
        await ws.shutdown()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(ENTRY, min_size=1, max_size=12))
def test_any_script_leaves_a_consistent_saved_thread(entries) -> None:
    asyncio.run(play(entries))
