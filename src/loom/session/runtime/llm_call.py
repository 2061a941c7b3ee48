"""One model call for a session: context, streaming, usage and cost, error mapping."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from loom.core import state as sm
from loom.core.clock import now_iso
from loom.core.events import Notice, TextDeltaEvent, ThinkingDeltaEvent
from loom.core.ids import new_message_id
from loom.core.messages import (
    AssistantMessage,
    Message,
    ReasoningPart,
    ToolCall,
    Usage,
    clean_message,
    for_model,
)
from loom.core.text import clean_text
from loom.llm import loop_share
from loom.llm.base import (
    LlmRequest,
    Provider,
    ReasoningReady,
    StreamEnd,
    TextDelta,
    ThinkingDelta,
    ToolCallReady,
    UsageReport,
)
from loom.llm.catalog import cost_usd, model_info
from loom.llm.registry import parse_model_name
from loom.llm.retry import is_transient
from loom.providers import declaration
from loom.session.runtime import background
from loom.session.runtime.compaction import Compactor
from loom.session.runtime.context import BuiltContext, ContextWindow
from loom.session.runtime.decision_zone import fetch_decision_context
from loom.session.runtime.image_loading import ImageLoader
from loom.session.runtime.repo_map import fetch_repo_map
from loom.session.runtime.stall_watch import until_stalled

INLINE_COUNTING_CHARS = 200_000  # new text up to this is counted on the loop (~10 ms)

if TYPE_CHECKING:
    from loom.session.runtime.context_view import ContextView
    from loom.session.runtime.ports import ModelPort


class LlmCaller:
    def __init__(self, session: ModelPort, factory: Callable[[str], Provider]) -> None:
        self.session = session
        self.factory = factory
        self.last_exception: BaseException | None = None
        self.system_prompt: str | None = None  # set by architect mode for its planning call
        self._providers: dict[str, Provider] = {}
        self._windows: dict[tuple[str, str], ContextWindow] = {}
        self._compactor: Compactor | None = None
        self.images = ImageLoader()
        self._effort_noted: set[tuple[str, str]] = set()  # (model, effort) said to be ignored
        # one build of a window at a time: a call's may run on a worker thread, and a
        # preview (/context) must not read or change the window's state meanwhile
        self._building = asyncio.Lock()

    @staticmethod
    def split(model: str) -> tuple[str, str]:
        return parse_model_name(model)

    def check_model(self, model: str) -> None:
        parse_model_name(model)  # raises ModelConfigError with a clear message

    def provider(self, model: str) -> Provider:
        provider = self._providers.get(model)
        if provider is None:
            provider = self._providers[model] = self.factory(model)
        return provider

    def window(self, model: str, system: str) -> ContextWindow:
        key = (model, system)
        window = self._windows.get(key)
        if window is None:
            options = self.session.options
            provider, model_id = self.split(model)
            info = model_info(provider, model_id)
            reserved = min(options.reserved_output_tokens, info.max_output_tokens)
            # the project's instructions are part of `system` (loom.session.runtime.prompt)
            window = self._windows[key] = ContextWindow(
                context_window=options.max_context_tokens or info.context_window,
                reserved_output=reserved,
                system_prompt=system,
                repo_map_tokens=options.repo_map_tokens,
            )
        return window

    async def call(self, conversation: Sequence[Message]) -> sm.AgentEvent:
        """Stream one response; returns LlmResponded or LlmFailed (never raises, except
        cancellation)."""
        session = self.session
        model = session.active_model
        # Many sessions start a call in the same loop turn (a shared workspace, a burst
        # of messages): each step of CPU work waits for room in the turn (`loop_share`).
        await loop_share.room()
        try:
            provider = self.provider(model)
            _, model_id = self.split(model)
            system = self.system_prompt or await session.prompts.agent(model)
            window = self.window(model, system)
        except Exception as exc:  # no API key, unknown provider: permanent, clear message
            self.last_exception = exc
            return sm.LlmFailed(str(exc), transient=False)
        specs = session.active_tools.specs() if self.system_prompt is None else []
        options = session.options
        repo_map, decisions, notes = await self._per_call(window, conversation)
        await loop_share.room()
        async with self._building:
            built = await self._build(window, conversation, specs, repo_map, decisions, notes)
        # a resumed thread's images: bytes from the store (a missing one is sent as a note)
        await self.images.load(built.messages, options.image_store)
        request = LlmRequest(
            model=model_id,
            messages=[for_model(m) for m in built.messages],  # attachments after the words
            system=built.system,
            tools=specs,
            max_tokens=window.reserved_output,
            effort=self._effort(model),
            context=built.context,
            cache_key=options.cache_key or session.thread.id,
            cache_ttl=options.cache_ttl,
        )
        parts: list[str] = []
        reasoning: list[ReasoningPart] = []
        calls: list[ToolCall] = []
        usage: Usage | None = None
        stop = "end_turn"
        started = False
        try:
            async for event in until_stalled(provider.stream(request), options.stall_timeout):
                if not started:
                    started = True
                    session.apply_now(sm.LlmStreamStarted())
                if isinstance(event, TextDelta):
                    if event.text:
                        parts.append(event.text)
                        # Shown as it streams: half an emoji must not break a terminal
                        # (the joined message below keeps a pair split across chunks).
                        shown = clean_text(event.text)
                        session.publish(TextDeltaEvent(session_id=session.id, text=shown))
                elif isinstance(event, ThinkingDelta):
                    if event.text:
                        shown = clean_text(event.text)
                        session.publish(ThinkingDeltaEvent(session_id=session.id, text=shown))
                elif isinstance(event, ReasoningReady):
                    reasoning.append(event.part)
                elif isinstance(event, ToolCallReady):
                    calls.append(event.call)
                elif isinstance(event, UsageReport):
                    usage = event.usage
                elif isinstance(event, StreamEnd):
                    stop = event.stop_reason
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.last_exception = exc
            name = getattr(provider, "name", "the provider")
            said = str(exc)  # named once: "openai returned HTTP 400", not "openai: openai ..."
            text = said if name.lower() in said.lower() else f"{name}: {said}"
            return sm.LlmFailed(text, transient=is_transient(exc))
        self.last_exception = None
        text = "".join(parts)
        decl = declaration(getattr(provider, "name", ""))
        if not calls and options.text_tool_calls and decl is not None and decl.text_tool_calls:
            from loom.llm.text_tool_calls import extract_text_tool_calls

            text, calls = extract_text_tool_calls(text)
            if calls:
                stop = "tool_use"
        calls = _unique_ids(calls)
        if usage is not None:
            usage = self._account(model, usage)
        message = AssistantMessage(
            content=text,
            tool_calls=calls,
            reasoning=reasoning or None,
            model=model,
            usage=usage,
            stop_reason=stop,
            id=new_message_id(),
            created_at=now_iso(),
            mode="architect" if session.mode == "architect" else None,
        )
        from loom.session.runtime.tool_runner import runs_in_parallel  # loaded with an answer

        clean_message(message)  # model output enters here: no lone surrogate gets past
        tools = session.active_tools
        parallel = frozenset(c.id for c in calls if runs_in_parallel(tools, c))
        return sm.LlmResponded(message, parallel)

    async def _per_call(
        self, window: ContextWindow, conversation: Sequence[Message]
    ) -> tuple[str, str, str]:
        """What changes per call: (the repo map, the decision zone, the environment news)."""
        session, options = self.session, self.session.options
        repo_map = await fetch_repo_map(
            options.repo_map, window.repo_map_tokens, conversation, options.repo_map_timeout
        )
        decisions = await fetch_decision_context(
            options.decision_context, options.decision_tokens, options.repo_map_timeout
        )
        news = await session.prompts.news()
        ended = background.ended_note(session.tools)
        return repo_map, decisions, "\n\n".join(part for part in (news, ended) if part)

    async def preview(self, conversation: Sequence[Message]) -> ContextView:
        """Where the window would go on the next call (`/context`): the request built
        from the same pieces as `call`, without compacting or calling the model."""
        from loom.session.runtime.context_view import context_view

        session = self.session
        model = session.active_model
        system = await session.prompts.agent(model)
        window = self.window(model, system)
        specs = session.active_tools.specs()
        repo_map, decisions, notes = await self._per_call(window, conversation)
        view = self.compactor.view(conversation)
        brief = session.options.context_brief
        async with self._building:  # never beside a call's build (a worker thread's)
            built = window.preview(
                view.messages, specs, repo_map, decisions, view.summary, notes, brief
            )
        instructions = await session.prompts.instructions_text_soon()
        return context_view(model, built, specs, instructions, decisions)

    async def _build(
        self,
        window: ContextWindow,
        conversation: Sequence[Message],
        specs: list,
        repo_map: str,
        decisions: str,
        notes: str = "",
    ) -> BuiltContext:
        """The request's context: a compaction's summary stands in for the turns it
        folded; when the rest still does not fit, fold more (or, failing that, leave the
        oldest turns out and say so)."""
        compactor = self.compactor
        view = compactor.view(conversation)
        # Counting tokens is CPU work on every new message's text (a pasted 50 MB log
        # too): a big batch goes to a worker thread, so the loop keeps answering keys,
        # Cancel and signals; the usual few new messages are counted here, without the
        # thread hop (milliseconds per call on a busy machine).
        zones = (specs, repo_map, decisions)
        brief = self.session.options.context_brief
        work = window.counting_work(view.messages, *zones, view.summary, notes, brief)
        if work > INLINE_COUNTING_CHARS:
            built = await asyncio.to_thread(
                window.build, list(view.messages), *zones, view.summary, notes, brief
            )
        else:
            built = window.build(view.messages, *zones, view.summary, notes, brief)
        if not built.budget.omitted_messages or not compactor.should_try(conversation):
            return built
        from loom.session.runtime.compaction import CompactionError

        try:
            folded = await compactor.compact(conversation, built.budget.history_budget)
        except CompactionError as exc:
            compactor.report_fallback(str(exc), built.budget.omitted_messages)
            return built
        if folded is None:
            return built
        return await asyncio.to_thread(
            window.build, list(folded.messages), *zones, folded.summary, notes, brief
        )

    def _effort(self, model: str) -> str | None:
        """The session's effort; for a model that cannot reason, None, said once."""
        from loom.llm.effort import ignored_note

        effort = self.session.effort
        note = ignored_note(*self.split(model), effort)
        if note is None:
            return effort
        if (model, str(effort)) not in self._effort_noted:
            self._effort_noted.add((model, str(effort)))
            self.session.publish(Notice(session_id=self.session.id, source="effort", text=note))
        return None

    @property
    def compactor(self) -> Compactor:
        if self._compactor is None:
            self._compactor = Compactor(self.session)
        return self._compactor

    def _account(self, model: str, usage: Usage) -> Usage:
        """The response's usage with its cost: None for a model with no known price (not
        0, which would read as free); the session's total is unknown from then on."""
        provider, model_id = self.split(model)
        info = model_info(provider, model_id)
        cost = cost_usd(info, usage, self.session.options.cache_ttl) if info.known else None
        usage = usage.model_copy(update={"cost_usd": cost})
        self.session.count_usage(usage)
        return usage


def _unique_ids(calls: list[ToolCall]) -> list[ToolCall]:
    """Every call gets a distinct, non-empty id (a result is matched to its call by id)."""
    seen: set[str] = set()
    fixed = []
    for call in calls:
        if not call.id or call.id in seen:
            from loom.core.ids import new_call_id

            call = call.model_copy(update={"id": new_call_id()})
        seen.add(call.id)
        fixed.append(call)
    return fixed
