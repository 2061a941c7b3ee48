"""Context compaction: old turns summarised by the fast model instead of dropped.

When the history no longer fits its zone of the context window, the oldest whole turns
(a user message and everything up to the next one, so a tool call is never separated
from its result) are summarised by the fast model (`[model] editor`, else the fast
model of the session's provider, else the session's own) into a *compaction record*
saved in the thread's `compactions` field: the summary,
the ids of the messages it stands for, the first message it keeps, and the model that
wrote it. From then on the model sees the summary (in the system text) instead of those
turns; the thread keeps every original message. `/compact [focus]` does it on demand.

When summarising fails (no model, an error), the request falls back to leaving the old
turns out (loom.session.runtime.context) and a `context_compacted` event says so, once;
the session never fails for want of a summary. It does not try again until something
changed: another summary model, a key for one that had none, or RETRY_AFTER_TURNS more
turns (a session whose editor model had no key used to fail, and log, on every call).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from loom.core.clock import now_iso
from loom.core.errors import LoomError
from loom.core.events import ContextCompacted
from loom.core.extras import extra_field
from loom.core.messages import AssistantMessage, Message, ToolMessage, UserMessage, for_model
from loom.llm.tokens import estimate_message_tokens, estimate_tokens

log = logging.getLogger(__name__)

FIELD = "compactions"
KEEP_FRACTION = 0.5  # after compacting, the kept turns use at most this share of the zone
SUMMARY_MAX_TOKENS = 2048
TRANSCRIPT_MAX_TOKENS = 60_000  # what the fast model is asked to read, at most
TOOL_OUTPUT_CHARS = 2_000  # each tool result, shortened, in the transcript
RETRY_AFTER_TURNS = 10  # a failed summary is tried again after this many more user turns

SUMMARY_SYSTEM = (
    "You summarise the earlier part of a conversation between a user and an AI coding "
    "agent, so the agent can carry on without it. Keep what the agent needs: the user's "
    "goals and decisions, constraints they stated, files read or changed and how, "
    "commands run and their outcomes, errors met, and what is still open. Be specific "
    "(paths, names, values); drop chit-chat. Write plain prose and short lists, no preamble."
)


class CompactionError(LoomError):
    """Summarising failed; the caller falls back to leaving old turns out. `setup`: the
    summary model's provider could not even be built (no key, unknown provider)."""

    def __init__(self, message: str, *, setup: bool = False) -> None:
        super().__init__(message)
        self.setup = setup


@dataclass
class _Failure:
    """The last summary that failed: what was tried, when, and what the person was told."""

    model: str
    turns: int  # user turns in the conversation then
    setup: bool


@dataclass(frozen=True)
class View:
    """What of the conversation the model is shown, with the summary standing in for
    the rest (`start` is where the shown messages begin)."""

    messages: Sequence[Message]
    summary: str
    start: int


def records(thread: Any) -> list[dict[str, Any]]:
    found = extra_field(thread, FIELD)
    return found if isinstance(found, list) else []


def _view(
    found: list[dict[str, Any]],
    conversation: Sequence[Message],
    positions: dict[str, tuple[Message, int]],
) -> View:
    """The newest compaction that applies to `conversation` (its first kept message is
    still there: a rewind past it voids it), or the whole conversation. `positions`
    remembers where each first kept message was last seen (checked by identity), so a
    long session does not search the conversation on every call."""
    for record in reversed(found):
        summary, kept = record.get("summary"), record.get("first_kept_message_id")
        if not isinstance(summary, str) or not isinstance(kept, str):
            continue
        start = _position(conversation, kept, positions)
        if start is not None:
            return View(conversation[start:], summary, start)
    return View(conversation, "", 0)


def _position(
    conversation: Sequence[Message], message_id: str, positions: dict[str, tuple[Message, int]]
) -> int | None:
    seen = positions.get(message_id)
    if seen is not None:
        message, index = seen
        if index < len(conversation) and conversation[index] is message:
            return index
    for index, message in enumerate(conversation):
        if message.id == message_id:
            positions[message_id] = (message, index)
            return index
    return None


def cut_point(conversation: Sequence[Message], start: int, keep_tokens: int) -> int | None:
    """The earliest turn start after `start` from which the rest fits `keep_tokens`,
    keeping at least the newest turn; None when there is nothing before it to fold."""
    turn_starts = [
        i for i in range(start + 1, len(conversation)) if isinstance(conversation[i], UserMessage)
    ]
    if not turn_starts:
        return None
    cut = turn_starts[-1]  # the current turn always stays
    kept = sum(estimate_message_tokens(m) for m in conversation[cut:])
    for index in reversed(turn_starts[:-1]):
        cost = sum(estimate_message_tokens(m) for m in conversation[index:cut])
        if kept + cost > keep_tokens:
            break
        kept += cost
        cut = index
    return cut


def transcript(messages: Sequence[Message], previous_summary: str) -> str:
    """The folded turns as plain text for the fast model (tool output shortened)."""
    parts: list[str] = []
    if previous_summary:
        parts.append(f"[Summary of what came before]\n{previous_summary}")
    for message in messages:
        if isinstance(message, UserMessage):
            parts.append(f"USER: {for_model(message).content}")  # with its attachments
        elif isinstance(message, AssistantMessage):
            line = f"AGENT: {message.content}".rstrip()
            for call in message.tool_calls:
                line += f"\n  -> {call.tool_name} {call.arguments_json}"
            parts.append(line)
        elif isinstance(message, ToolMessage):
            text = message.content
            if len(text) > TOOL_OUTPUT_CHARS:
                text = text[:TOOL_OUTPUT_CHARS] + f" [... {len(text) - TOOL_OUTPUT_CHARS} chars]"
            marker = " (error)" if message.is_error else ""
            parts.append(f"RESULT of {message.tool_name}{marker}: {text}")
        else:
            parts.append(f"{message.role.upper()}: {message.content}")
    text = "\n\n".join(parts)
    # keep the newest part when it is too long for one request
    limit = TRANSCRIPT_MAX_TOKENS * 4
    if estimate_tokens(text) > TRANSCRIPT_MAX_TOKENS:
        text = "[... the oldest part is left out]\n" + text[-limit:]
    return text


class Compactor:
    """One session's compactions: deciding, summarising, recording, reporting."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self._failure: _Failure | None = None
        self._told = ""  # the last fallback the person was told about
        self._positions: dict[str, tuple[Message, int]] = {}
        self._counted: tuple[int, Message | None, int] = (0, None, 0)  # len, last, user turns

    def view(self, conversation: Sequence[Message]) -> View:
        return _view(records(self.session.thread), conversation, self._positions)

    def should_try(self, conversation: Sequence[Message]) -> bool:
        """Compaction is on, and no summary failed, or something changed since one did."""
        if not self.session.options.compaction:
            return False
        failure = self._failure
        if failure is None or self.summary_model() != failure.model:
            return True
        if failure.setup:  # retried once its provider can be built (a key was added)
            try:
                self.session.llm.provider(failure.model)
            except Exception:
                return False
            return True
        return self._user_turns(conversation) >= failure.turns + RETRY_AFTER_TURNS

    def _user_turns(self, conversation: Sequence[Message]) -> int:
        """User messages in `conversation`, counted incrementally (it only grows)."""
        seen, last, turns = self._counted
        if seen > len(conversation) or (seen and conversation[seen - 1] is not last):
            seen, turns = 0, 0  # a different history (a rewind)
        turns += sum(1 for m in conversation[seen:] if isinstance(m, UserMessage))
        self._counted = (len(conversation), conversation[-1] if conversation else None, turns)
        return turns

    async def compact(
        self,
        conversation: Sequence[Message],
        history_budget: int,
        focus: str = "",
        trigger: str = "auto",
    ) -> View | None:
        """Fold the oldest turns so the rest uses about half of `history_budget`
        (`history_budget` 0: all but the newest turn). Returns the new view, or None
        when there was nothing to fold. Raises CompactionError when summarising fails."""
        current = self.view(conversation)
        keep = int(history_budget * KEEP_FRACTION)
        # token counts and the transcript read every message's text: off the event loop
        cut = await asyncio.to_thread(cut_point, list(conversation), current.start, keep)
        if cut is None or cut <= current.start:
            return None
        folded = conversation[current.start : cut]
        hooks = getattr(self.session, "hooks", None)
        if hooks is not None:  # PreCompact: "manual" (/compact) or "auto"
            await hooks.pre_compact(trigger, focus)
        model = self.summary_model()
        text = await asyncio.to_thread(transcript, list(folded), current.summary)
        try:
            summary = await self._summarise(model, text, focus)
        except CompactionError as exc:
            self._failure = _Failure(model, self._user_turns(conversation), exc.setup)
            raise
        self._failure, self._told = None, ""
        before = sum(estimate_message_tokens(m) for m in conversation[current.start :])
        before += estimate_tokens(current.summary)
        after = sum(estimate_message_tokens(m) for m in conversation[cut:])
        after += estimate_tokens(summary)
        record = {
            "id": f"compaction-{len(records(self.session.thread)) + 1}",
            "summary": summary,
            "first_kept_message_id": conversation[cut].id,
            "message_ids": [m.id for m in folded if m.id],
            "message_count": len(folded),
            "replaces_compaction": _id_of_applied(self.session.thread, current),
            "model": model,
            "focus": focus or None,
            "created_at": now_iso(),
        }
        setattr(self.session.thread, FIELD, [*records(self.session.thread), record])
        self.session.request_save()
        self.session.publish(
            ContextCompacted(
                session_id=self.session.id,
                summarised_messages=len(folded),
                model=model,
                tokens_before=before,
                tokens_after=after,
            )
        )
        return View(conversation[cut:], summary, cut)

    def report_fallback(self, error: str, omitted: int) -> None:
        """Tell the person, once per problem, that older turns are left out instead."""
        if error == self._told:
            return
        self._told = error
        self.session.publish(
            ContextCompacted(
                session_id=self.session.id,
                fallback=f"could not summarise older turns ({error}); {omitted} older "
                "message(s) are left out of the request instead (the thread keeps them)",
            )
        )

    def summary_model(self) -> str:
        from loom.session.runtime.role_models import model_for

        return model_for(self.session, "editor")

    async def _summarise(self, model: str, text: str, focus: str) -> str:
        from loom.core.messages import UserMessage as Ask
        from loom.llm.base import LlmRequest, TextDelta

        ask = "Summarise this conversation so far for the agent to carry on."
        if focus:
            ask += f" Keep in particular everything about: {focus}."
        request_text = f"{ask}\n\n<conversation>\n{text}\n</conversation>"
        try:
            provider = self.session.llm.provider(model)
        except Exception as exc:  # no key, unknown provider: not worth retrying as is
            log.warning("compaction summary with %s is not possible: %s", model, exc)
            raise CompactionError(f"{model}: {exc}", setup=True) from exc
        try:
            from loom.llm.effort import least_effort

            provider_name, model_id = self.session.llm.split(model)
            request = LlmRequest(
                model=model_id,
                messages=[Ask(content=request_text)],
                system=SUMMARY_SYSTEM,
                tools=[],
                max_tokens=SUMMARY_MAX_TOKENS,
                # a summary needs no thinking: it would spend the summary's output tokens
                effort=least_effort(provider_name, model_id),
                # its own conversation's cache (a breakpoint on Anthropic at the TTL)
                cache_key=f"{self.session.thread.id}:summary",
                cache_ttl=self.session.options.cache_ttl,
            )
            parts = []
            async for event in provider.stream(request):
                if isinstance(event, TextDelta):
                    parts.append(event.text)
        except Exception as exc:  # no key, unknown provider, network, API error
            log.warning("compaction summary with %s failed: %s", model, exc)
            raise CompactionError(f"{model}: {exc}") from exc
        summary = "".join(parts).strip()
        if not summary:
            raise CompactionError(f"{model} returned an empty summary")
        return summary


def _id_of_applied(thread: Any, view: View) -> str | None:
    if not view.summary:
        return None
    for record in reversed(records(thread)):
        if record.get("summary") == view.summary:
            return record.get("id")
    return None


async def compact_now(session: Any, focus: str = "") -> View | None:
    """`/compact [focus]`: fold every turn but the newest now."""
    from loom.core import state as sm

    if session.get_status() != "idle" or session.busy:
        raise CompactionError("the agent is working; wait for the turn to end (or Ctrl-C)")
    conversation = sm.conversation_of(session.state)
    compactor = session.llm.compactor
    result = await compactor.compact(conversation, history_budget=0, focus=focus, trigger="manual")
    if result is None:
        raise CompactionError("nothing to compact yet: the conversation has a single turn")
    await session.flush()
    return result
