"""The context blocks a session sent, kept where they were sent, and what the next one says.

A call's context block (the repo map, the decision zone, the environment's news, the note
about omitted messages) goes after the conversation. It stays there: on later calls the
block is a message of the history at the place it was first sent (the same bytes, so
the providers' caches keep serving it), and a new block carries only the parts that
changed since the last one still shown. A call with nothing new sends no block.

A part is sent again when its text changed, or when the block that last showed it is no
longer in the request (a cut, a compaction). The repo map is re-ranked on every call
around the files in recent tool calls, so its text changes nearly every call; it is sent
again only when its ranked file set moved by more than MAP_DRIFT from the one the model
sees, or when it changed at all and MAP_REFRESH_CALLS answers came since that one. An
empty part (a map that timed out, no decisions) leaves the last one shown as it was.
The todo list needs no block: the todo tool's results carry it in the history.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loom.core.messages import UserMessage
from loom.llm.tokens import estimate_tokens

CONTEXT_HEADING = (
    "<loom-context>\n(From Loom, not the user: what this call should know. Sent when it "
    "changes; a part not repeated here is as the last <loom-context> block showed it.)"
)
CONTEXT_END = "</loom-context>"
PARTS = ("brief", "omitted", "decisions", "map", "notes")  # in the order a block shows them
MAP_DRIFT = 0.5  # share of the map's ranked files that differ before it is sent again
MAP_REFRESH_CALLS = 12  # a changed map is sent after this many answers in any case


def context_block(parts: Sequence[str]) -> str:
    """The context block a call sends after its conversation ("" when it has none)."""
    kept = [part.strip() for part in parts if part and part.strip()]
    if not kept:
        return ""
    return "\n\n".join([CONTEXT_HEADING, *kept, CONTEXT_END])


def map_files(repo_map: str) -> frozenset[str]:
    """The files a rendered repo map ranks (its `path:` header lines; every non-empty
    line for a map in another shape)."""
    lines = [line for line in repo_map.splitlines() if line.strip()]
    headers = [line[:-1] for line in lines if line.endswith(":") and not line[:1].isspace()]
    return frozenset(headers or lines)


def map_drift(shown: str, new: str) -> float:
    """How far `new`'s ranked files are from `shown`'s: 0 the same set, 1 disjoint."""
    before, after = map_files(shown), map_files(new)
    union = before | after
    return len(union - (before & after)) / len(union) if union else 0.0


@dataclass(frozen=True)
class SentBlock:
    at: int  # sent after the first `at` messages of the conversation (before message `at`)
    parts: dict[str, str]  # part name -> its text as sent
    message: UserMessage  # the block as a history message: one object, the same bytes
    tokens: int


class SentBlocks:
    """The blocks a context window sent for one conversation, oldest first."""

    def __init__(self) -> None:
        self._blocks: list[SentBlock] = []

    def clear(self) -> None:
        self._blocks = []

    def snapshot(self) -> list[SentBlock]:
        return list(self._blocks)

    def restore(self, blocks: list[SentBlock]) -> None:
        self._blocks = blocks

    def shown(self, start: int, end: int) -> list[SentBlock]:
        """The blocks in a request that sends the messages from `start` to `end` (after
        the current turn's question, when only its newest rounds are sent: a block
        between them goes with the rounds cut), each right after the message it followed."""
        return [b for b in self._blocks if start < b.at < end]

    def tokens_after(self, start: int, end: int) -> int:
        return sum(b.tokens for b in self._blocks if start < b.at < end)

    def news(
        self, parts: dict[str, str], shown: Sequence[SentBlock], answers: Callable[[int], int]
    ) -> dict[str, str]:
        """The parts (of `parts`, name -> text for this call) the next block carries:
        those the model does not see as they are. `answers(at)` counts the answers since
        the block at `at`."""
        latest: dict[str, SentBlock] = {}
        for block in shown:
            for name in block.parts:
                latest[name] = block
        new: dict[str, str] = {}
        for name in PARTS:
            text = parts.get(name, "")
            if not text.strip():
                continue
            last = latest.get(name)
            if last is None or _worth_sending(name, last, text, answers):
                new[name] = text
        return new

    def record(self, at: int, parts: dict[str, str], start: int) -> str:
        """The block sent after the first `at` messages (none when `parts` is empty);
        blocks up to `start` (cut off) and from `at` on (a call made again) are
        forgotten."""
        self._blocks = [b for b in self._blocks if start < b.at < at]
        text = context_block([parts[name] for name in PARTS if name in parts])
        if text:
            block = SentBlock(at, dict(parts), UserMessage(content=text), estimate_tokens(text))
            self._blocks.append(block)
        return text


def _worth_sending(name: str, last: SentBlock, text: str, answers: Callable[[int], int]) -> bool:
    """A changed part is sent again; a re-ranked repo map only when its files moved
    (MAP_DRIFT) or it has not been sent for MAP_REFRESH_CALLS answers."""
    if text == last.parts[name]:
        return False
    if name != "map":
        return True
    return map_drift(last.parts[name], text) > MAP_DRIFT or answers(last.at) >= MAP_REFRESH_CALLS
