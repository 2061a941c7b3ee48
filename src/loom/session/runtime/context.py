"""The context window: what of the conversation the model is shown on each call.

The window is split into zones, each with a budget: the system prompt, the project's
rules (LOOM.md), the repo map (when a hook provides one), the tool definitions, the
output reserved for the answer, and what is left for history. When history does not
fit, the oldest *whole turns* (a user message and everything up to the next one) are
left out, so a tool call is never separated from its result. If even the current turn
is too big, its oldest complete tool rounds go first; the user's message that started
the turn always stays. The thread keeps everything: pruning only shapes the request.

Token counts are offline estimates, cached per message and kept as prefix sums, so a
build costs O(log n) after the first; the conversation only ever grows.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loom.core.messages import AssistantMessage, Message, UserMessage
from loom.llm.base import ToolSpec
from loom.llm.tokens import (
    estimate_message_tokens,
    estimate_tokens,
    estimate_tool_specs_tokens,
    fit_to_tokens,
)

RepoMapHook = Callable[[int, list[str], list[str]], str]
"""(token budget, focus files, mentioned identifiers) -> a ranked repo map that fits the
budget, or "" for none. Called off the event loop (see `loom.session.runtime.repo_map`)."""

SUMMARY_HEADING = (
    "# Summary of the earlier conversation\n\n(Older turns were summarised to fit the "
    "context window; the user saw them in full.)"
)
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
    history_used: int
    omitted_messages: int
    summary: int = 0  # tokens of a compaction summary standing in for older turns


@dataclass(frozen=True)
class BuiltContext:
    system: str
    messages: list[Message]
    budget: ContextBudget


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
        # where each turn starts. Valid while the conversation only grows.
        self._seen: list[Message] = []
        self._prefix: list[int] = [0]
        self._turn_starts: list[int] = []
        self._tools_cache: tuple[tuple[ToolSpec, ...], int] | None = None

    # -- building ------------------------------------------------------------------

    def build(
        self,
        conversation: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        repo_map: str = "",
        decisions: str = "",
        summary: str = "",
    ) -> BuiltContext:
        """The request's system text and messages. `repo_map` is the map for this call
        (already fetched by the caller); it is cut to the zone's budget. `decisions` is
        the decision graph's zone, already fitted to its own budget by its builder.
        `summary` stands in for older turns a compaction folded (session.compaction)."""
        self._extend(conversation)
        system_parts = [self.system_prompt]
        if self.rules:
            system_parts.append(f"# Project rules (LOOM.md)\n\n{self.rules}")
        if decisions:
            system_parts.append(decisions)
        repo_map_text = ""
        if repo_map and self.repo_map_tokens > 0:
            repo_map_text = fit_to_tokens(repo_map.strip(), self.repo_map_tokens)
            system_parts.append(f"# Repository map\n\n{repo_map_text}")

        summary_tokens = 0
        if summary:
            system_parts.append(f"{SUMMARY_HEADING}\n\n{summary.strip()}")
            summary_tokens = estimate_tokens(system_parts[-1])

        system_tokens, rules_tokens = self._system_tokens, self._rules_tokens
        map_tokens = estimate_tokens(repo_map_text) if repo_map_text else 0
        tools_tokens = self._tool_tokens(tools)
        note_tokens = self._note_tokens
        fixed = system_tokens + rules_tokens + map_tokens + tools_tokens + self.reserved_output
        fixed += estimate_tokens(decisions) if decisions else 0
        fixed += summary_tokens
        budget = max(0, self.context_window - fixed - note_tokens)

        start = self._first_kept(len(conversation), budget)
        messages = list(conversation[start:])
        if start == len(conversation) and conversation:
            if self._turn_starts:
                messages = self._trim_current_turn(conversation, budget)
            else:
                messages = list(conversation)  # no turn to cut at: send it and let it fail
        omitted = len(conversation) - len(messages)
        if omitted:
            system_parts.append(OMITTED_NOTE.format(count=omitted))
        used = self._prefix[len(conversation)] - self._prefix[len(conversation) - len(messages)]
        return BuiltContext(
            system="\n\n".join(part for part in system_parts if part),
            messages=messages,
            budget=ContextBudget(
                context_window=self.context_window,
                reserved_output=self.reserved_output,
                system=system_tokens,
                rules=rules_tokens,
                repo_map=map_tokens,
                tools=tools_tokens,
                history_budget=budget,
                history_used=used,
                omitted_messages=omitted,
                summary=summary_tokens,
            ),
        )

    # -- internals -------------------------------------------------------------------

    def counting_work(self, conversation: Sequence[Message]) -> int:
        """About how many characters `build(conversation)` has still to count (only new
        messages are counted): the caller sends big work to a worker thread."""
        seen = len(self._seen)
        if len(conversation) < seen or (seen and conversation[seen - 1] is not self._seen[-1]):
            seen = 0
        return sum(len(m.content) + 200 for m in conversation[seen:])

    def _extend(self, conversation: Sequence[Message]) -> None:
        seen = len(self._seen)
        if len(conversation) < seen or (seen and conversation[seen - 1] is not self._seen[-1]):
            self._seen, self._prefix, self._turn_starts = [], [0], []  # a different history
            seen = 0
        for index in range(seen, len(conversation)):
            message = conversation[index]
            self._seen.append(message)
            self._prefix.append(self._prefix[-1] + estimate_message_tokens(message))
            if isinstance(message, UserMessage):
                self._turn_starts.append(index)

    def _first_kept(self, end: int, budget: int) -> int:
        """The earliest turn start from which the rest of the history fits the budget."""
        total = self._prefix[end]
        if total <= budget:
            return 0
        # the smallest turn start s with total - prefix[s] <= budget
        starts = self._turn_starts
        position = bisect.bisect_left([self._prefix[s] for s in starts], total - budget)
        return starts[position] if position < len(starts) else end

    def _trim_current_turn(self, conversation: Sequence[Message], budget: int) -> list[Message]:
        """The last turn alone is too big: keep its user message and its newest rounds."""
        first = self._turn_starts[-1]
        head = conversation[first]
        rounds: list[list[Message]] = []
        for message in conversation[first + 1 :]:
            if isinstance(message, AssistantMessage) or not rounds:
                rounds.append([message])
            else:
                rounds[-1].append(message)
        left = budget - estimate_message_tokens(head)
        kept: list[list[Message]] = []
        for group in reversed(rounds):
            cost = sum(estimate_message_tokens(m) for m in group)
            if cost > left and kept:
                break
            kept.append(group)
            left -= cost
        return [head, *(m for group in reversed(kept) for m in group)]

    def _tool_tokens(self, tools: Sequence[ToolSpec]) -> int:
        key = tuple(tools)
        if self._tools_cache is not None and self._tools_cache[0] == key:
            return self._tools_cache[1]
        count = estimate_tool_specs_tokens(key)
        self._tools_cache = (key, count)
        return count
