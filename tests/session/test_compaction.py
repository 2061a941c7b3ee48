"""Context compaction on a long scripted history: the fast model's summary stands in for
old turns, the thread keeps every original, and a failing summary never stops a turn."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from loom.core.messages import ToolMessage, UserMessage
from loom.llm.base import LlmError, LlmRequest
from loom.llm.scripted import ScriptedProvider, ScriptedTurn, tool_turn
from loom.llm.tokens import estimate_message_tokens, estimate_tokens
from loom.session.runtime.compaction import SUMMARY_SYSTEM, compact_now
from loom.session.runtime.compaction import records as compaction_records
from tests.support.sessions import ANY_MODEL, EchoTool, make_workspace, only

EDITOR = "openai:gpt-5-mini"


class Agent:
    """Answers like an agent (one echo call per question, then a reply) and, when asked
    for a summary, like the fast model (or fails, when told to)."""

    def __init__(self, summary_fails: bool = False) -> None:
        self.summary_fails = summary_fails
        self.summary_requests: list[LlmRequest] = []
        self.calls = 0

    def __call__(self, request: LlmRequest) -> ScriptedTurn | str:
        if request.system == SUMMARY_SYSTEM:
            self.summary_requests.append(request)
            if self.summary_fails:
                return ScriptedTurn(error=LlmError("model overloaded", transient=False))
            return "SUMMARY: the user asked questions 0.. and the agent echoed long text."
        self.calls += 1
        if isinstance(request.messages[-1], ToolMessage):
            return f"answer {self.calls}"
        return tool_turn("echo", {"text": "long " * 300})


def _session_factory(agent: Agent, project: Path):
    main, editor = ScriptedProvider([agent] * 200), ScriptedProvider([agent] * 50)
    ws = make_workspace(
        project,
        providers={ANY_MODEL: main, EDITOR: editor},
        max_context_tokens=6_000,
        reserved_output_tokens=1_000,
        compaction=True,
        editor_model=EDITOR,
    )
    return ws, main, editor


def _tokens(request: LlmRequest) -> int:
    return estimate_tokens(request.system) + sum(
        estimate_message_tokens(m) for m in request.messages
    )


async def test_old_turns_are_summarised_and_the_thread_keeps_them(tmp_path) -> None:
    agent = Agent()
    ws, main, editor = _session_factory(agent, tmp_path)
    session = await ws.start_session(only(EchoTool()))
    events: list[Any] = []
    session.subscribe(events.append)
    for n in range(8):
        await session.send_message(f"question {n} " + "filler " * 600)

    assert agent.summary_requests, "the history outgrew its zone but nothing was summarised"
    assert len(editor.requests) == len(agent.summary_requests)  # the fast model wrote it
    first_summary = agent.summary_requests[0]
    assert "question 0" in first_summary.messages[0].content  # the folded turns, as text

    last = main.requests[-1]
    # the summary opens the history (the prefix stays the same after it); the system
    # text is the session's own
    assert "SUMMARY: the user asked" in last.messages[0].content
    assert "SUMMARY" not in last.system and last.system == main.requests[0].system
    seen = [last.context, *(m.content for m in last.messages)]  # blocks stay in the history
    assert not any("earlier message(s) of this conversation are not shown" in t for t in seen)
    sent = [m for m in last.messages[1:] if isinstance(m, UserMessage)]
    assert "question 0" not in sent[0].content  # folded away, the summary stands in
    history = session.get_history()
    assert len(history) == 8 * 4  # every original message is kept
    everything = sum(estimate_message_tokens(m) for m in history)
    assert _tokens(last) < everything

    records = compaction_records(session.thread)
    assert records[-1]["model"] == EDITOR and records[-1]["message_ids"]
    kept = records[-1]["first_kept_message_id"]
    assert any(m.id == kept for m in history)
    shown = [e for e in events if e.type == "context_compacted"]
    assert shown and shown[0].model == EDITOR and not shown[0].fallback
    assert shown[0].tokens_after < shown[0].tokens_before

    # saved and reloaded: the summary still stands in for the folded turns
    await session.flush()
    reloaded = ws.store.load(session.thread.id)
    assert reloaded.compactions == records and len(reloaded.messages) == 32
    await ws.shutdown()


async def test_a_failing_summary_falls_back_to_dropping_and_the_turn_goes_on(tmp_path) -> None:
    agent = Agent(summary_fails=True)
    ws, main, _editor = _session_factory(agent, tmp_path)
    session = await ws.start_session(only(EchoTool()))
    events: list[Any] = []
    session.subscribe(events.append)
    answers = [await session.send_message(f"question {n} " + "filler " * 600) for n in range(6)]
    assert all(a.startswith("answer") for a in answers)
    assert agent.summary_requests  # it was tried ...
    fallbacks = [e for e in events if e.type == "context_compacted" and e.fallback]
    assert fallbacks and "model overloaded" in fallbacks[0].fallback  # ... and said so
    # ... once: nothing changed since (same model, fewer than RETRY_AFTER_TURNS turns)
    assert len(agent.summary_requests) == 1 and len(fallbacks) == 1
    last = main.requests[-1]  # old turns dropped instead (said in a block kept since)
    assert any(
        "earlier message(s)" in t for t in [last.context, *(m.content for m in last.messages)]
    )
    assert not getattr(session.thread, "compactions", None)
    await ws.shutdown()


async def test_a_summary_model_without_a_key_is_tried_again_once_it_has_one(tmp_path) -> None:
    agent = Agent()
    main = ScriptedProvider([agent] * 200)
    providers = {ANY_MODEL: main}  # the editor model cannot be built: no key for it
    ws = make_workspace(
        tmp_path,
        providers=providers,
        max_context_tokens=6_000,
        reserved_output_tokens=1_000,
        compaction=True,
        editor_model=EDITOR,
    )
    session = await ws.start_session(only(EchoTool()))
    events: list[Any] = []
    session.subscribe(events.append)
    for n in range(6):
        await session.send_message(f"question {n} " + "filler " * 600)
    fallbacks = [e for e in events if e.type == "context_compacted" and e.fallback]
    assert len(fallbacks) == 1 and EDITOR in fallbacks[0].fallback  # told once, not per call
    assert not agent.summary_requests
    providers[EDITOR] = ScriptedProvider([agent] * 50)  # the key is set
    await session.send_message("question 6 " + "filler " * 600)
    assert agent.summary_requests  # tried again at once
    assert compaction_records(session.thread)
    await ws.shutdown()


async def test_a_failed_summary_is_tried_again_with_another_model(tmp_path) -> None:
    agent = Agent(summary_fails=True)
    ws, _main, _editor = _session_factory(agent, tmp_path)
    session = await ws.start_session(only(EchoTool()))
    for n in range(5):
        await session.send_message(f"question {n} " + "filler " * 600)
    assert len(agent.summary_requests) == 1
    # another summary model (the options are frozen: a session with other ones)
    session.options = dataclasses.replace(session.options, editor_model=ANY_MODEL)
    await session.send_message("question 5 " + "filler " * 600)
    assert len(agent.summary_requests) == 2
    await ws.shutdown()


async def test_compact_on_demand_with_focus(tmp_path) -> None:
    agent = Agent()
    ws, main, _editor = _session_factory(agent, tmp_path)
    session = await ws.start_session(only(EchoTool()))
    await session.send_message("first short question")
    await session.send_message("second short question")
    view = await compact_now(session, focus="the echo tool")
    assert view is not None and "SUMMARY" in view.summary
    assert "the echo tool" in agent.summary_requests[-1].messages[0].content
    await session.send_message("third")
    sent = " ".join(m.content for m in main.requests[-1].messages)
    assert "first short question" not in sent and "second short question" in sent
    assert "SUMMARY" in main.requests[-1].messages[0].content
    await ws.shutdown()


async def test_without_model_editor_the_summary_model_follows_the_sessions_provider(
    tmp_path,
) -> None:
    """An OpenAI-only person: the summary is written by OpenAI's fast model, never by an
    Anthropic default they have no key for."""
    agent = Agent()
    openai_main = ScriptedProvider([agent] * 200)
    fast = ScriptedProvider([agent] * 50)
    ws = make_workspace(tmp_path,
        providers={"openai:gpt-4.1": openai_main, "openai:gpt-5-mini": fast},
        max_context_tokens=6_000, reserved_output_tokens=1_000, compaction=True,
    )  # fmt: skip
    session = await ws.start_session(only(EchoTool(), model="openai:gpt-4.1"))
    for n in range(5):
        await session.send_message(f"question {n} " + "filler " * 600)
    assert agent.summary_requests and compaction_records(session.thread)
    assert compaction_records(session.thread)[-1]["model"] == "openai:gpt-5-mini"
    await ws.shutdown()


async def test_with_reasoning_on_a_summary_asks_for_the_least_thinking(tmp_path) -> None:
    """The session thinks hard; its summaries (by gpt-5-mini, which always reasons) ask
    for the least, so thinking does not eat the summary's output tokens."""
    agent = Agent()
    ws, main, _editor = _session_factory(agent, tmp_path)
    session = await ws.start_session(only(EchoTool(), effort="high"))
    for n in range(8):
        await session.send_message(f"question {n} " + "filler " * 600)
    assert agent.summary_requests
    assert {r.effort for r in agent.summary_requests} == {"minimal"}
    assert {r.effort for r in main.requests} == {"high"}
    await ws.shutdown()
