"""`GET /events`: the Server-Sent Events stream a tab listens to.

`/events?session=ID&after=SEQ` replays that session's events numbered after SEQ (the
page was rendered up to it) and then follows it live; on an automatic reconnect the
browser's `Last-Event-ID` takes the place of `after`. Every stream also carries the
sidebar's live-session list when a badge changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from sse_starlette.sse import EventSourceResponse
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from loom.web.live import Client
from loom.web.state import WebState

PING_SECONDS = 15
IDLE_CHECK_SECONDS = 5
MAX_BATCH = 200


async def events(request: Request) -> EventSourceResponse:
    state: WebState = request.app.state.web
    session = request.query_params.get("session", "")
    after_text = request.query_params.get("after", "0")
    after = int(after_text) if after_text.isdigit() else 0
    last_id = request.headers.get("last-event-id", "")
    if last_id.isdigit():
        after = max(after, int(last_id))
    return _EndedStream(
        _follow(request, state, session, after),
        ping=PING_SECONDS,
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )


async def _follow(
    request: Request, state: WebState, session_id: str, after: int
) -> AsyncIterator[bytes]:
    client = Client()
    live = state.live(session_id) if session_id else None
    backlog, complete = live.attach(client, after) if live is not None else ([], True)
    state.hub.watch_sidebar(client)
    try:
        if session_id and live is None:
            yield _plain({"type": "ended"})  # the session stopped: show the saved thread
        if not complete:
            yield _plain({"type": "reset"})  # more was missed than we keep: reload
            return
        for start in range(0, len(backlog), MAX_BATCH):
            part = backlog[start : start + MAX_BATCH]
            yield _frame("[" + ",".join(d for _, d in part) + "]", part[-1][0])
        while True:
            try:
                # a deadline on this await: wait_for would wrap every get in a new task
                # and cost two more turns of the event loop before the frame is written
                async with asyncio.timeout(IDLE_CHECK_SECONDS):
                    seq, data = await client.queue.get()
            except TimeoutError:
                if live is not None and live.id not in state.hub.sessions:
                    yield _plain({"type": "ended"})
                    return
                continue
            if client.overflowed:
                yield _plain({"type": "reset"})
                return
            # A backlog (a busy machine, a fast stream) goes out as one frame: a JSON
            # array of the payloads, numbered by the last one.
            batch = [data]
            while len(batch) < MAX_BATCH and not client.queue.empty():
                next_seq, next_data = client.queue.get_nowait()
                batch.append(next_data)
                seq = next_seq if next_seq is not None else seq
            yield _frame(data if len(batch) == 1 else "[" + ",".join(batch) + "]", seq)
    finally:
        state.hub.sidebar_clients.discard(client)
        if live is not None:
            live.detach(client)


class _EndedStream(EventSourceResponse):
    """A stream that ends its response even when the server stops it: on Ctrl-C the SSE
    library cancels the stream and returns without the closing message, and uvicorn then
    printed "ERROR: ASGI callable returned without completing response" for every open
    tab on the terminal of the person who pressed it."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        sent = {"start": False, "end": False}

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                sent["start"] = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                sent["end"] = True
            await send(message)

        await super().__call__(scope, receive, watched)
        if sent["start"] and not sent["end"]:
            with contextlib.suppress(Exception):  # the client may be gone already
                await send({"type": "http.response.body", "body": b"", "more_body": False})


def _plain(payload: dict[str, Any]) -> bytes:
    return _frame(json.dumps(payload))


def _frame(data: str, seq: int | None = None) -> bytes:
    """One SSE event, encoded here: `data` is JSON, always one line (json.dumps escapes
    every newline), so the generic encoder's line splitting has nothing to do."""
    head = f"id: {seq}\n" if seq is not None else ""
    return f"{head}data: {data}\n\n".encode()


routes = [Route("/events", events)]
