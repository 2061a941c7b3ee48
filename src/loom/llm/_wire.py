"""Request bodies built without re-walking the history on every call.

A long session sends the same messages again and again, each request one turn longer.
Converting the whole history to a provider's format (and letting its SDK walk and copy
it once more) made every model call cost O(conversation): half a second per request at
2,000 messages. Here each message is encoded once, to JSON bytes, and the request body
is joined from those pieces; the adapters hand the bytes to their SDK's low-level post,
which sends them as they are.

Two caches:

- per message (`cached_units`): its encoding in each wire format, kept for as long as
  the message lives (a weak reference drops it with the message), checked against the
  message's fields (a message is never changed in place once recorded: a field is
  replaced, which the check sees);
- per conversation (`WireHistory`): the wire messages of the part of the history that can
  no longer change (every group but the last: a tool call's group closes when the next
  user or assistant message arrives), so a call encodes only what is new.

An encoder maps one message to *units*: `(role, bytes)`. A unit whose role is None is a
whole wire message (OpenAI); units of the same role that follow each other are merged
into one wire message by `wrap` (Anthropic's content blocks, Gemini's parts), since those
APIs want roles to alternate. A new kind of message part (an image) is one more unit in
the adapter's encoder; nothing here changes.
"""

from __future__ import annotations

import json
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from itertools import pairwise
from operator import is_
from typing import Any

import orjson

from loom.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from loom.llm._convert import OMITTED_START, pair_segment

Unit = tuple[str | None, bytes]
Encoder = Callable[[Any], list[Unit]]
Wrap = Callable[[str, list[bytes]], bytes]


def dumps(value: Any) -> bytes:
    """Compact JSON bytes (UTF-8). orjson, or the standard library for what orjson
    refuses (integers past 64 bits, nesting past 255 levels)."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "surrogatepass"
        )


def body(head: dict[str, Any], field: str, items: Sequence[bytes]) -> bytes:
    """`head` as a JSON object with `field` set to the array of pre-encoded `items`."""
    encoded = dumps(head)
    opening = (b"{" if encoded == b"{}" else encoded[:-1] + b",") + dumps(field) + b":["
    if not items:
        return opening + b"]}"
    # One join over the whole body, every item copied once: an item may be a run of a
    # long history's messages (megabytes), so none is concatenated with its neighbours.
    parts = [opening]
    for item in items:
        parts += (item, b",")
    parts[-1] = b"]}"
    return b"".join(parts)


# id(message) -> (weak reference to it, {format: (its fields when encoded, units)}).
_encoded: dict[int, tuple[weakref.ref[Any], dict[str, tuple[tuple[Any, ...], list[Unit]]]]] = {}


def cached_units(message: Any, fmt: str, encode: Encoder) -> list[Unit]:
    """`encode(message)`, made once per message and format."""
    fields = tuple(message.__dict__.values())
    entry = _encoded.get(id(message))
    if entry is not None and entry[0]() is message:
        hit = entry[1].get(fmt)
        if hit is not None and hit[0] == fields:
            return hit[1]
    else:
        entry = _encoded[id(message)] = (_weak(message), {})
    units = encode(message)
    entry[1][fmt] = (fields, units)
    return units


def _weak(message: Any) -> weakref.ref[Any]:
    key = id(message)

    def forget(ref: weakref.ref[Any]) -> None:
        entry = _encoded.get(key)
        if entry is not None and entry[0] is ref:
            del _encoded[key]

    return weakref.ref(message, forget)


RUN = 64
"""Complete wire messages joined into one run (see `_Memo.fold`)."""


class _Memo:
    """The closed part of one conversation in one format."""

    __slots__ = (
        "done",
        "first",
        "objs",
        "open_blocks",
        "open_role",
        "run_sizes",
        "runs",
        "started",
        "system",
    )

    def __init__(self, first: Message) -> None:
        self.first = first  # held, so the id() this memo is filed under stays its own
        self.objs: list[Message] = []  # the messages consumed, in request order
        self.system: list[str] = []  # texts of system messages among them
        self.runs: list[bytes] = []  # the oldest complete wire messages, comma-joined runs
        self.run_sizes: list[int] = []  # how many wire messages each run holds
        self.done: list[bytes] = []  # the complete wire messages after the runs
        self.open_role: str | None = None  # the last wire message, still open to merging
        self.open_blocks: list[bytes] = []
        self.started = False  # has any message been emitted (see OMITTED_START)

    def fold(self) -> None:
        """Join each full `RUN` of complete wire messages into one run, and two runs of
        the same size into one (a binary counter): a request is then a handful of
        pieces whatever the conversation's length, and over a whole conversation each
        message is copied about log2(messages / RUN) times, instead of once per call."""
        while len(self.done) >= RUN:
            self.runs.append(b",".join(self.done[:RUN]))
            self.run_sizes.append(RUN)
            del self.done[:RUN]
            sizes = self.run_sizes
            while len(sizes) > 1 and sizes[-2] == sizes[-1]:
                last, size = self.runs.pop(), sizes.pop()
                self.runs[-1] = b",".join((self.runs[-1], last))
                sizes[-1] += size

    def fork(self) -> _Memo:
        """A scratch copy to emit the open tail into (the memo itself is not changed)."""
        copy = _Memo(self.first)
        copy.system = list(self.system)
        copy.open_role, copy.open_blocks = self.open_role, list(self.open_blocks)
        copy.started = self.started
        return copy


class WireHistory:
    """The wire messages of request histories in one format, built incrementally.

    `encoded` counts messages encoded (cache misses) and `walked` the messages the last
    call looked at: tests hold a long session to "each message converted once".
    """

    KEEP = 4  # conversations remembered (a session's own, plus compaction requests)

    def __init__(self, fmt: str, encode: Encoder, wrap: Wrap, open_groups: int = 1) -> None:
        self.fmt = fmt
        # the newest groups wrapped again on every call (a `mark` reaches their last unit)
        self.open_groups = open_groups
        self._encode = encode
        self._wrap = wrap
        self._memos: OrderedDict[int, _Memo] = OrderedDict()
        self._omitted = encode(UserMessage(content=OMITTED_START))
        self.encoded = 0
        self.walked = 0

    def encode(
        self,
        messages: Sequence[Message],
        *,
        after: Sequence[Unit] = (),
        mark: Callable[[bytes], bytes] | None = None,
    ) -> tuple[list[bytes], list[str]]:
        """(wire messages, texts of the system messages among `messages`): calls answered
        by their results, in order, starting with a user message (see `_convert`). The
        oldest come as runs, several wire messages already comma-joined: the items are
        only ever comma-joined into a JSON array (`body`).

        `after` are units sent after the conversation (the call's context block).
        `mark` rewrites the last unit of each of the newest `open_groups` groups (a
        prompt-cache breakpoint): only those groups are wrapped again per call, the
        older history stays as it was encoded."""
        self.walked = 0
        if not messages:
            tail = _Memo(UserMessage(content=""))
            extra: list[bytes] = []
            self._emit(tail, list(after), extra)
            return self._close(tail, extra), []
        memo = self._memo(messages)
        consumed = len(memo.objs)
        cut = _group_start(messages, consumed, self.open_groups)
        if cut > consumed:
            self._feed(memo, messages[consumed:cut], memo.done)
            memo.objs.extend(messages[consumed:cut])
            memo.fold()
        tail = memo.fork()
        extra = []
        if mark is None:
            self._feed(tail, messages[cut:], extra)
        else:
            for start, end in _groups(messages, cut):
                self._feed(tail, messages[start:end], extra, mark)
        self._emit(tail, list(after), extra)
        return [*memo.runs, *memo.done, *self._close(tail, extra)], tail.system

    def _close(self, tail: _Memo, extra: list[bytes]) -> list[bytes]:
        if tail.open_role is not None:
            extra.append(self._wrap(tail.open_role, tail.open_blocks))
        return extra

    def _memo(self, messages: Sequence[Message]) -> _Memo:
        key = id(messages[0])
        memo = self._memos.get(key)
        if memo is not None and (
            memo.first is not messages[0]
            or len(memo.objs) > len(messages)
            or not all(map(is_, memo.objs, messages))
        ):
            memo = None  # a rewind or a different history under a reused id
        if memo is None:
            memo = self._memos[key] = _Memo(messages[0])
            while len(self._memos) > self.KEEP:
                self._memos.popitem(last=False)
        self._memos.move_to_end(key)
        return memo

    def _feed(
        self,
        state: _Memo,
        segment: Sequence[Message],
        done: list[bytes],
        mark: Callable[[bytes], bytes] | None = None,
    ) -> None:
        """Emit `segment` (whole groups) into `state`, completed wire messages to `done`;
        `mark` rewrites the segment's last unit."""
        self.walked += len(segment)
        units: list[Unit] = []
        for message in pair_segment(segment, state.system):
            if not state.started:
                state.started = True
                if isinstance(message, AssistantMessage):
                    units += self._omitted
            units += cached_units(message, self.fmt, self._counted)
        if mark is not None and units:
            role, piece = units[-1]
            units[-1] = (role, mark(piece))
        self._emit(state, units, done)

    def _counted(self, message: Message) -> list[Unit]:
        self.encoded += 1
        return self._encode(message)

    def _emit(self, state: _Memo, units: list[Unit], done: list[bytes]) -> None:
        for role, piece in units:
            if role is not None and role == state.open_role:
                state.open_blocks.append(piece)
                continue
            if state.open_role is not None:
                done.append(self._wrap(state.open_role, state.open_blocks))
                state.open_role, state.open_blocks = None, []
            if role is None:
                done.append(piece)
            else:
                state.open_role, state.open_blocks = role, [piece]


def _group_start(messages: Sequence[Message], floor: int, groups: int = 1) -> int:
    """Index of the message (at or after `floor`) that starts the `groups`-th last group;
    a group starts at a message that is neither a tool result nor a system message. What
    starts at the last one may still grow."""
    found = floor
    for index in range(len(messages) - 1, floor - 1, -1):
        if not isinstance(messages[index], ToolMessage | SystemMessage):
            found = index
            groups -= 1
            if groups <= 0:
                return index
    return found if groups < 1 else floor


def _groups(messages: Sequence[Message], start: int) -> list[tuple[int, int]]:
    """(start, end) of each group from `start` on (the first may begin with results)."""
    bounds = [start]
    for index in range(start + 1, len(messages)):
        if not isinstance(messages[index], ToolMessage | SystemMessage):
            bounds.append(index)
    bounds.append(len(messages))
    return list(pairwise(bounds))
