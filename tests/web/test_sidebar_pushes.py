"""The sidebar's live-session list: how often it is rendered and sent to the tabs.

Twenty sessions starting a turn together change their badges over many loop turns; each
change used to render the list and send it to every tab (~30 renders per tab in
bench/web_bench.py), and the streamed words waited behind them. Counts only: the loop
runs in its own thread (Playwright keeps one running in this one)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from loom.web import live as live_module
from loom.web.live import Client, Hub


def run(body: Callable[[], Coroutine[Any, Any, None]]) -> None:
    worker = threading.Thread(target=lambda: asyncio.run(body()))
    worker.start()
    worker.join()


async def settled(hub: Hub) -> None:
    """Until the pending push (if any) has run: SIDEBAR_INTERVAL_S, more on a busy machine."""
    for _ in range(400):
        await asyncio.sleep(0)
        if not hub._badges_dirty:
            return
        await asyncio.sleep(0.05)


def sent(client: Client) -> list[str]:
    out = []
    while not client.queue.empty():
        out.append(json.loads(client.queue.get_nowait()[1])["html"])
    return out


def test_a_burst_of_badge_changes_is_rendered_twice_not_once_per_loop_turn() -> None:
    hub = Hub()
    client = Client()
    hub.watch_sidebar(client)
    renders: list[int] = []
    state = {"busy": 0}

    def render() -> str:
        renders.append(1)
        return f"{state['busy']} busy"

    hub.render_sidebar = render

    async def body() -> None:
        for busy in range(1, 21):  # one session after another, each in its own loop turn
            state["busy"] = busy
            hub.badges_changed()
            await asyncio.sleep(0)
        await settled(hub)

    run(body)
    assert len(renders) == 2  # was 20: one per loop turn with a change
    assert sent(client) == ["1 busy", "20 busy"]  # the first at once, the last for sure


def test_an_unchanged_list_is_not_sent_again() -> None:
    hub = Hub()
    client = Client()
    hub.watch_sidebar(client)
    hub.render_sidebar = lambda: "2 busy"
    live_module_interval = live_module.SIDEBAR_INTERVAL_S

    async def body() -> None:
        live_module.SIDEBAR_INTERVAL_S = 0.0
        try:
            for _ in range(5):  # Thinking -> Running a tool -> Thinking: the list reads the same
                hub.badges_changed()
                await asyncio.sleep(0)
                await asyncio.sleep(0)
        finally:
            live_module.SIDEBAR_INTERVAL_S = live_module_interval

    run(body)
    assert sent(client) == ["2 busy"]
    other = Client()
    hub.watch_sidebar(other)  # a new tab: its page may show another list; send again

    async def again() -> None:
        hub.badges_changed()
        await settled(hub)

    run(again)
    assert sent(other) == ["2 busy"]
