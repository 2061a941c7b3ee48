"""EventBus: in-process publish/subscribe on topics such as `session:<id>`.

`publish` never waits: each subscriber has its own bounded queue, so a slow subscriber
cannot block a session. When a queue is full the oldest event is dropped and the
subscription counts it (`dropped`), so a reader can tell it missed something; text
deltas are the bulk of events and losing an old one is better than stalling the agent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from loom._timeouts import within

log = logging.getLogger(__name__)

DEFAULT_QUEUE_SIZE = 10_000


class Subscription:
    """An async iterator of the events published on one topic since subscribing."""

    def __init__(self, bus: EventBus, topic: str, maxsize: int) -> None:
        self.bus = bus
        self.topic = topic
        self.dropped = 0
        self._queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=maxsize)
        self._closed = False

    def _offer(self, event: Any) -> None:
        if self._closed:
            return
        if self._queue.full():
            self._queue.get_nowait()
            self.dropped += 1
        self._queue.put_nowait(event)

    async def get(self, timeout: float | None = None) -> Any:
        if timeout is None:
            return await self._queue.get()
        return await within(self._queue.get(), timeout)

    def get_nowait(self) -> Any:
        """The next queued event; raises asyncio.QueueEmpty when there is none."""
        return self._queue.get_nowait()

    def drain(self) -> list[Any]:
        """Every event queued right now, without waiting."""
        events = []
        while not self._queue.empty():
            events.append(self._queue.get_nowait())
        return events

    def close(self) -> None:
        self._closed = True
        self.bus._remove(self)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self

    async def __anext__(self) -> Any:
        if self._closed and self._queue.empty():
            raise StopAsyncIteration
        return await self._queue.get()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EventBus:
    def __init__(self) -> None:
        self._subscribers: dict[str, list[Subscription]] = {}
        self._callbacks: dict[str, list[Callable[[Any], None]]] = {}

    def listen(self, topic: str, callback: Callable[[Any], None]) -> Callable[[], None]:
        """Call `callback(event)` synchronously on every publish; returns `unsubscribe`.

        For quick consumers that must see every event before the publisher moves on
        (a terminal printing deltas). The callback must not block; an exception in it
        is logged and never reaches the session. Slow consumers use `subscribe`."""
        self._callbacks.setdefault(topic, []).append(callback)

        def unsubscribe() -> None:
            callbacks = self._callbacks.get(topic)
            if callbacks and callback in callbacks:
                callbacks.remove(callback)
                if not callbacks:
                    del self._callbacks[topic]

        return unsubscribe

    def subscribe(self, topic: str, *, maxsize: int = DEFAULT_QUEUE_SIZE) -> Subscription:
        subscription = Subscription(self, topic, maxsize)
        self._subscribers.setdefault(topic, []).append(subscription)
        return subscription

    def publish(self, topic: str, event: Any) -> int:
        """Deliver `event` to every subscriber of `topic`; returns how many got it."""
        delivered = 0
        for callback in self._callbacks.get(topic, ()):
            delivered += 1
            try:
                callback(event)
            except Exception:
                log.exception("an event listener on %s failed", topic)
        for subscription in self._subscribers.get(topic, ()):
            subscription._offer(event)
            delivered += 1
        return delivered

    def subscriber_count(self, topic: str) -> int:
        return len(self._subscribers.get(topic, ())) + len(self._callbacks.get(topic, ()))

    def _remove(self, subscription: Subscription) -> None:
        subscribers = self._subscribers.get(subscription.topic)
        if subscribers and subscription in subscribers:
            subscribers.remove(subscription)
            if not subscribers:
                del self._subscribers[subscription.topic]
