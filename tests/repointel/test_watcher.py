"""The watcher really watches the project: an edit shows up in the map and as an event."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from loom.repointel import repo_map_for, start_watcher
from loom.repointel.service import RepoIntel
from loom.repointel.watcher import RepoUpdate
from tests.support.files import write


def wait_for(predicate, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_editing_a_file_updates_the_map_and_publishes_an_update(shop: Path) -> None:
    updates: list[RepoUpdate] = []
    watcher = start_watcher(shop, updates.append)
    try:
        assert watcher.running
        assert "def refund_everything" not in repo_map_for(shop, token_budget=4000)
        with open(shop / "shop" / "pricing.py", "a") as handle:
            handle.write("\n\ndef refund_everything(order: Order) -> int:\n    return 0\n")
        assert wait_for(lambda: any("shop/pricing.py" in u.changed for u in updates))
        assert "def refund_everything" in repo_map_for(shop, token_budget=4000)
        write(shop, "debug.log", "ignored by default? no: but not source")
        write(shop, "node_modules/x/index.js", "function hidden() {}\n")
        write(shop, "shop/extra.py", "def brand_new():\n    pass\n")
        assert wait_for(lambda: any("shop/extra.py" in u.added for u in updates))
        assert all("node_modules/x/index.js" not in u.added for u in updates)
        assert updates[0].to_dict()["topic"] == "repo:updates"
    finally:
        watcher.stop()
        RepoIntel.forget(shop)
    assert not watcher.running


def test_updates_can_be_delivered_on_an_event_loop(shop: Path) -> None:
    async def main() -> RepoUpdate:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[RepoUpdate] = asyncio.Queue()
        watcher = start_watcher(shop, queue.put_nowait, loop=loop)
        try:
            (shop / "shop" / "catalog.py").unlink()
            return await asyncio.wait_for(queue.get(), 15)
        finally:
            watcher.stop()
            RepoIntel.forget(shop)

    update = asyncio.run(main())
    assert update.removed == ["shop/catalog.py"]
