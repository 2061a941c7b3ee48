"""The context window: what of the conversation the model is shown on each call.

The window is split into zones, each with a budget: the system prompt, the project's
rules (LOOM.md), the repo map (when a hook provides one), the tool definitions, the
output reserved for the answer, and what is left for history. When history does not
fit, the oldest *whole turns* (a user message and everything up to the next one) are
left out, so a tool call is never separated from its result. If even the current turn
is too big, its oldest complete tool rounds go first; the user's message that started
the turn always stays. The thread keeps everything: pruning only shapes the request.

Pay for each token once (the providers' prompt caches serve a prefix they saw before):
the system text (prompt, rules) never changes within a session; what changes per call
(the repo map for this call, the decision zone, the note about omitted messages) is the
call's *context block*, sent after the conversation (`BuiltContext.context`) and kept
there on later calls, which send a block only with what changed since
(`loom.session.runtime.context_blocks`); a compaction's summary is the first message of
the history, where it stays. History is cut in steps, down to a low-water mark
(LOW_WATER of its budget), so the calls after a cut share their prefix until the next
one, instead of one turn dropped per call.

Token counts are offline estimates, cached per message and kept as prefix sums, so a
build costs O(log n) after the first; the conversation only ever grows. They are taken
only once the history may not fit (its length in characters bounds its tokens).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from loom.core.messages import AssistantMessage, Message, UserMessage
from loom.llm.base import ToolSpec
from loom.llm.tokens import (
    estimate_message_tokens,
    estimate_tokens,
    estimate_tool_specs_tokens,
    fit_to_tokens,
    message_tokens_ceiling,
)
from loom.session.runtime.context_blocks import (
    CONTEXT_END,
    CONTEXT_HEADING,
    SentBlock,
    SentBlocks,
)

RepoMapHook = Callable[[int, list[str], list[str]], str]
"""(token budget, focus files, mentioned identifiers) -> a ranked repo map that fits the
budget, or "" for none. Called off the event loop (see `loom.session.runtime.repo_map`)."""

SUMMARY_HEADING = (
    "# Summary of the earlier conversation\n\n(Older turns were summarised to fit the "
    "context window; the user saw them in full.)"
)
LOW_WATER = 0.6  # a cut keeps the newest history that fits in this share of its budget
OMITTED_NOTE = (
    "[Loom: {count} earlier message(s) of this conversation are not shown to fit the "
    "context window; the thread keeps them. Ask the user if you need what they said.]"
)


@dataclass(frozen=True)
class ContextBudget:
    context_window: int
    reserved_output: int
    system: int
    rules: int
    repo_map: int
    tools: int
    history_budget: int
    omitted_messages: int
    summary: int = 0  # tokens of a compaction summary standing in for older turns
    sent: Sequence[Message] = field(default=(), repr=False, compare=False)

    @property
    def history_used(self) -> int:
        """Tokens of the history sent, counted when asked: a request whose history fits
        for sure is built without counting it."""
        return sum(estimate_message_tokens(message) for message in self.sent)


@dataclass(frozen=True)
class _Zones:
    system: str
    context_parts: tuple[tuple[str, str], ...]  # (part, text): what changes per call
    budget: int  # left for history
    map_tokens: int
    tools_tokens: int
    summary_tokens: int


@dataclass(frozen=True)
class BuiltContext:
    system: str  # the same text on every call of a session
    messages: list[Message]  # with the context blocks earlier calls sent, where they were sent
    budget: ContextBudget
    context: str = ""  # the call's new context block, sent after the conversation


class ContextWindow:
    def __init__(
        self,
        *,
        context_window: int,
        reserved_output: int,
        system_prompt: str,
        rules: str = "",
        rules_max_tokens: int = 4000,
        repo_map_tokens: int = 1024,
    ) -> None:
        if context_window <= reserved_output:
            raise ValueError(
                f"the context window ({context_window} tokens) must be larger than the "
                f"reserved output ({reserved_output} tokens); lower context.reserved_output_tokens"
            )
        self.context_window = context_window
        self.reserved_output = reserved_output
        self.system_prompt = system_prompt
        self.rules = fit_to_tokens(rules.strip(), rules_max_tokens)
        self.repo_map_tokens = repo_map_tokens
        # the fixed zones are counted once
        self._system_tokens = estimate_tokens(system_prompt)
        self._rules_tokens = estimate_tokens(self.rules) if self.rules else 0
        self._note_tokens = estimate_tokens(OMITTED_NOTE) + 8
        # Per-message token counts of the conversation seen so far, as prefix sums, and
        # where each turn starts. Valid while the conversation only grows. The exact
        # counts are taken only when the history may not fit: until then the ceilings
        # (lengths: no piece of text costs more tokens than it has characters) say it
        # does, and counting every new message (~0.1 ms for a 2 kB tool result) waits.
        self._seen: list[Message] = []
        self._prefix: list[int] = [0]  # exact, for the first len - 1 messages seen
        self._ceilings: list[int] = [0]
        self._turn_starts: list[int] = []
        self._assistant_at: list[int] = []  # where the assistant messages are
        self._tools_cache: tuple[tuple[ToolSpec, ...], int] | None = None
        self._zones_cache: tuple[tuple[object, ...], _Zones] | None = None
        self._start = 0  # the first message kept: moves only at a cut (LOW_WATER)
        self._round_start: int | None = None  # the same, inside a turn too big alone
        self._summary: UserMessage | None = None  # one object per summary: a stable prefix
        self._blocks = SentBlocks()  # the context blocks sent, kept where they were sent

    # -- building ------------------------------------------------------------------

    def build(
        self,
        conversation: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        repo_map: str = "",
        decisions: str = "",
        summary: str = "",
        notes: str = "",
        brief: str = "",
    ) -> BuiltContext:
        """The request's system text, messages and context block. `repo_map` is the map
        for this call (already fetched by the caller); it is cut to the zone's budget.
        `decisions` is the decision graph's zone, already fitted to its own budget by its
        builder. `summary` stands in for older turns a compaction folded
        (session.compaction). `notes` are other news for this call (the environment
        since the session started); `brief` what a sub-agent is told of its role."""
        self._extend(conversation)
        zones = self._zones(tools, repo_map, decisions, summary, notes, brief)
        end = len(conversation)
        start = min(self._start, end)
        # the blocks earlier calls sent are history too (a cut may keep any of them)
        blocks = self._blocks.tokens_after(start, end)
        budget = max(0, zones.budget - blocks)
        if self._ceilings[end] - self._ceilings[start] > budget:  # may not fit: count
            self._count(end)
            if self._prefix[end] - self._prefix[start] > budget:
                start = self._cut(start, end, budget, blocks)
        # a turn start (the newest when even it is too big: trimmed below, per call)
        self._start = start if start < end or not self._turn_starts else self._turn_starts[-1]
        # the messages sent: [start, end), or the current turn's question and its newest
        # rounds [kept, end) when even that turn alone is too big
        ranges = [(start, end)]
        if start == len(conversation) and conversation:
            if self._turn_starts:
                first = self._turn_starts[-1]
                ranges = [(first, first + 1), (self._trim_current_turn(budget), end)]
            else:
                ranges = [(0, end)]  # no turn to cut at: send it and let it fail
        omitted = end - sum(high - low for low, high in ranges)
        parts = dict(zones.context_parts)
        if omitted:
            parts["omitted"] = OMITTED_NOTE.format(count=omitted)
        shown = self._blocks.shown(ranges[-1][0], end)
        new = self._blocks.news(parts, shown, self._answers_since)
        context = self._blocks.record(end, new, ranges[-1][0])
        messages = _interleave(conversation, ranges, shown)
        if summary:
            messages.insert(0, self._summary_message(summary))
        return BuiltContext(
            system=zones.system,
            messages=messages,
            context=context,
            budget=ContextBudget(
                context_window=self.context_window,
                reserved_output=self.reserved_output,
                system=self._system_tokens,
                rules=self._rules_tokens,
                repo_map=zones.map_tokens,
                tools=zones.tools_tokens,
                history_budget=budget,
                omitted_messages=omitted,
                summary=zones.summary_tokens,
                sent=messages,
            ),
        )

    def preview(
        self,
        conversation: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        repo_map: str = "",
        decisions: str = "",
        summary: str = "",
        notes: str = "",
        brief: str = "",
    ) -> BuiltContext:
        """What `build` would send (`/context`), with nothing remembered as sent: the
        next real call sends its context block as if no one had looked."""
        blocks, start, round_start = self._blocks.snapshot(), self._start, self._round_start
        try:
            return self.build(conversation, tools, repo_map, decisions, summary, notes, brief)
        finally:
            self._blocks.restore(blocks)
            self._start, self._round_start = start, round_start

    def _summary_message(self, summary: str) -> UserMessage:
        """The summary as the history's first message: the same object (so the same
        bytes, encoded once) on every call until the next compaction."""
        text = f"{SUMMARY_HEADING}\n\n{summary.strip()}"
        if self._summary is None or self._summary.content != text:
            self._summary = UserMessage(content=text)
        return self._summary

    # -- internals -------------------------------------------------------------------

    def counting_work(
        self,
        conversation: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        repo_map: str = "",
        decisions: str = "",
        summary: str = "",
        notes: str = "",
        brief: str = "",
    ) -> int:
        """About how many characters `build` (with the same arguments) has still to
        count: none when the history fits for sure, else the messages not counted yet.
        The caller sends big work to a worker thread."""
        self._extend(conversation)
        end = len(conversation)
        budget = self._zones(tools, repo_map, decisions, summary, notes, brief).budget
        if self._ceilings[end] - self._ceilings[min(self._start, end)] <= budget:
            return 0
        return sum(len(m.content) + 200 for m in self._seen[len(self._prefix) - 1 : end])

    def _zones(
        self,
        tools: Sequence[ToolSpec],
        repo_map: str,
        decisions: str,
        summary: str,
        notes: str,
        brief: str = "",
    ) -> _Zones:
        """The system text, the context block's parts and the budget left for history
        (the last call's, when its zones are the same: `counting_work` and `build` both
        ask)."""
        key = (tuple(tools), repo_map, decisions, summary, notes, brief)
        if self._zones_cache is not None and self._zones_cache[0] == key:
            return self._zones_cache[1]
        system_parts = [self.system_prompt]
        if self.rules:
            system_parts.append(f"# Project rules (LOOM.md)\n\n{self.rules}")
        context_parts = [("brief", brief)] if brief else []
        if decisions:
            context_parts.append(("decisions", decisions))
        repo_map_text = ""
        if repo_map and self.repo_map_tokens > 0:
            repo_map_text = fit_to_tokens(repo_map.strip(), self.repo_map_tokens)
            context_parts.append(("map", f"# Repository map\n\n{repo_map_text}"))
        if notes:
            context_parts.append(("notes", notes))
        summary_tokens = 0
        if summary:
            summary_tokens = estimate_tokens(f"{SUMMARY_HEADING}\n\n{summary.strip()}")

        map_tokens = estimate_tokens(repo_map_text) if repo_map_text else 0
        tools_tokens = self._tool_tokens(tools)
        fixed = self._system_tokens + self._rules_tokens + map_tokens + tools_tokens
        fixed += self.reserved_output + summary_tokens
        fixed += estimate_tokens(decisions) if decisions else 0
        fixed += estimate_tokens(notes) if notes else 0
        fixed += estimate_tokens(brief) if brief else 0
        fixed += estimate_tokens(CONTEXT_HEADING + CONTEXT_END) if context_parts else 0
        budget = max(0, self.context_window - fixed - self._note_tokens)
        system = "\n\n".join(part for part in system_parts if part)
        zones = _Zones(
            system, tuple(context_parts), budget, map_tokens, tools_tokens, summary_tokens
        )
        self._zones_cache = (key, zones)
        return zones

    def _extend(self, conversation: Sequence[Message]) -> None:
        seen = len(self._seen)
        if len(conversation) < seen or (seen and conversation[seen - 1] is not self._seen[-1]):
            self._seen, self._prefix, self._turn_starts = [], [0], []  # a different history
            self._ceilings, self._assistant_at = [0], []
            self._start, self._round_start = 0, None
            self._blocks.clear()
            seen = 0
        for index in range(seen, len(conversation)):
            message = conversation[index]
            self._seen.append(message)
            self._ceilings.append(self._ceilings[-1] + message_tokens_ceiling(message))
            if isinstance(message, UserMessage):
                self._turn_starts.append(index)
            elif isinstance(message, AssistantMessage):
                self._assistant_at.append(index)

    def _count(self, end: int) -> None:
        """The exact counts (prefix sums) of the first `end` messages seen."""
        for message in self._seen[len(self._prefix) - 1 : end]:
            self._prefix.append(self._prefix[-1] + estimate_message_tokens(message))

    def _cut(self, start: int, end: int, budget: int, blocks: int = 0) -> int:
        """The earliest turn start (from `start` on) from which the rest of the history
        (with the context blocks sent in it, at most `blocks` tokens) fits LOW_WATER of
        the budget, leaving the next calls room to grow without a cut (else the whole
        budget; else `end`: the newest turn alone is too big)."""
        starts = self._turn_starts
        lo = bisect.bisect_left(starts, start)
        for share in (LOW_WATER, 1.0):
            # the smallest turn start s with prefix[end] - prefix[s] <= budget * share
            target = self._prefix[end] - max(0, int(budget * share) - blocks)
            position = bisect.bisect_left(starts, target, lo=lo, key=self._prefix.__getitem__)
            if position < len(starts):
                return starts[position]
        return end

    def _trim_current_turn(self, budget: int) -> int:
        """The last turn alone is too big: keep its user message and its newest rounds
        (a round: an assistant message and the results after it), as many as fit
        LOW_WATER of the room, the newest always; the same rounds on later calls until
        they no longer fit. Returns where the rounds kept start. By the prefix sums and a
        bisect: a long autonomous run past the window walked its whole turn on every step
        (quadratic in its rounds)."""
        first, end = self._turn_starts[-1], len(self._seen)
        if first + 1 >= end:
            return end
        self._count(end)
        prefix = self._prefix
        left = budget - (prefix[first + 1] - prefix[first])
        kept = self._round_start
        if kept is None or kept <= first or prefix[end] - prefix[kept] > left:
            kept = self._round_start = self._round_cut(first, end, int(left * LOW_WATER))
        return kept

    def _answers_since(self, at: int) -> int:
        """How many answers (assistant messages) the conversation holds from `at` on."""
        return len(self._assistant_at) - bisect.bisect_left(self._assistant_at, at)

    def _round_cut(self, first: int, end: int, left: int) -> int:
        # Rounds start right after the user message, then at each assistant message; the
        # rounds from start s on cost prefix[end] - prefix[s], which falls as s grows, so
        # those kept start at the first s with prefix[s] >= prefix[end] - left.
        prefix = self._prefix
        starts, lo = self._assistant_at, bisect.bisect_right(self._assistant_at, first + 1)
        newest = starts[-1] if len(starts) > lo else first + 1
        found = bisect.bisect_left(starts, prefix[end] - left, lo=lo, key=prefix.__getitem__)
        start = starts[found] if found < len(starts) else end
        return min(start, newest)

    def _tool_tokens(self, tools: Sequence[ToolSpec]) -> int:
        key = tuple(tools)
        if self._tools_cache is not None and self._tools_cache[0] == key:
            return self._tools_cache[1]
        count = estimate_tool_specs_tokens(key)
        self._tools_cache = (key, count)
        return count


def _interleave(
    conversation: Sequence[Message], ranges: Sequence[tuple[int, int]], shown: Sequence[SentBlock]
) -> list[Message]:
    """The messages of `ranges`, each block of `shown` (all in the last range) right after
    the message it followed."""
    messages: list[Message] = []
    for low, high in ranges[:-1]:
        messages += conversation[low:high]
    at, end = ranges[-1]
    for block in shown:
        messages += conversation[at : block.at]
        messages.append(block.message)
        at = block.at
    messages += conversation[at:end]
    return messages
