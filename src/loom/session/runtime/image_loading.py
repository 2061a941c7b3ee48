"""Images of a resumed thread come back from the image store before the request is built.

A resumed thread's images are references (name, type, hash): their bytes are read from
the image store the first time a request carries them. Looking for such references used
to walk the whole history on every model call, O(conversation) Python work per step
(most of Loom's own per-step time at 4,000 steps). A history only grows between calls,
and a message that was looked at has had its images loaded, so each call looks only at
the messages after the ones the previous call saw.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any


class ImageLoader:
    """Per session: loads missing image bytes, looking at each message once.

    `looked_at` is how many messages the last call examined (tests hold a long session
    to "only what is new")."""

    def __init__(self) -> None:
        self._seen = 0  # how many messages of the last history were looked at
        self._last: Any = None  # the last of them: the same history continues only past it
        self.looked_at = 0

    def _new_part(self, messages: Sequence[Any]) -> Sequence[Any]:
        seen = self._seen
        if 0 < seen <= len(messages) and messages[seen - 1] is self._last:
            return messages[seen:]
        return messages  # the first call, a rewind, or another view: all of it

    async def load(self, messages: Sequence[Any], store: Any) -> None:
        new = self._new_part(messages)
        self.looked_at = len(new)
        missing = [ref for m in new for ref in (m.__dict__.get("images") or ()) if ref.data is None]
        if missing and store is not None:
            await asyncio.to_thread(lambda: [store.load(ref) for ref in missing])
        if messages:
            self._seen, self._last = len(messages), messages[-1]
