"""Draining the pending-sync queue after reconnecting: 1,000 threads, target <= 10 s.

    .venv/bin/python bench/sync_drain.py [--threads 1000] [--postgres]

A client saves N threads while the server is down (so they wait in the persisted
queue), then the server comes up and SyncingThreadStore.drain() pushes them all. The
baseline, measured in the same run against the same server, is the bare HTTP cost:
PUTting the same threads with a plain httpx loop (no local store, no queue bookkeeping).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.server import LiveServer, add_user, migrate, postgres_database

from loom.core.messages import AssistantMessage, UserMessage
from loom.core.thread import Thread
from loom.paths import LoomPaths
from loom.store.local import LocalThreadStore
from loom.store.pending import AckedVersions, PendingSyncQueue
from loom.store.sync_client import ThreadSyncClient
from loom.store.syncing import SyncingThreadStore


def make_threads(count: int) -> list[Thread]:
    threads = []
    for i in range(count):
        thread = Thread.new()
        for turn in range(4):
            thread.append(UserMessage(content=f"thread {i} question {turn} about the parser"))
            thread.append(AssistantMessage(content=f"answer {turn}: " + "details " * 40))
        thread.touch()
        threads.append(thread)
    return threads


def store_for(root: Path, url: str, token: str) -> SyncingThreadStore:
    paths = LoomPaths(root / "data", root / "state", root / "cache", root / "config")
    return SyncingThreadStore(
        LocalThreadStore(paths),
        ThreadSyncClient(url, token),
        PendingSyncQueue(paths.pending_sync_file),
        AckedVersions(paths.pending_sync_file.with_name("acked.json")),
        background=False,
    )


def run(database_url: str, count: int, rounds: int) -> None:
    home = Path(tempfile.mkdtemp(prefix="loom-drain-"))
    token = add_user(database_url, f"drain-{time.time_ns()}", "drain-org")
    server = LiveServer(database_url, home).start()
    try:
        drains, baselines = [], []
        for r in range(rounds):
            # Baseline: the same number of fresh threads, PUT one after another.
            plain = make_threads(count)
            with httpx.Client(
                base_url=server.url,
                timeout=30,
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            ) as client:
                started = time.perf_counter()
                for thread in plain:
                    client.put(
                        f"/api/threads/{thread.id}",
                        params={"expected_version": 0},
                        content=thread.model_dump_json(),
                    ).raise_for_status()
                baselines.append(time.perf_counter() - started)

            # Offline: saves go to the local store and the queue only.
            server.stop()
            store = store_for(home / f"client-{r}", server.url, token)
            threads = make_threads(count)
            for thread in threads:
                store.save(thread)
            assert len(store.queue) == count
            assert store.drain().unavailable  # the server really is down
            server.start()
            store.queue.entries()  # warm the file cache like a running client would
            started = time.perf_counter()
            total = 0
            while store.queue.entries():
                report = store.drain()
                total += report.pushed
                if report.unavailable:
                    raise SystemExit(f"server unreachable during drain: {report.unavailable}")
            drains.append(time.perf_counter() - started)
            store.close()
            assert total == count
        drain, base = statistics.median(drains), statistics.median(baselines)
        print(
            f"drain {count} pending threads after reconnect: median {drain:.2f} s "
            f"({count / drain:.0f}/s) over {rounds} run(s)   target <= 10 s"
        )
        print(
            f"baseline: plain sequential PUTs:           median {base:.2f} s ({count / base:.0f}/s)"
        )
        print(f"ratio drain / baseline: {drain / base:.2f}")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres", action="store_true", help="server on PostgreSQL")
    args = parser.parse_args()
    print(f"server database: {'PostgreSQL' if args.postgres else 'SQLite'}")
    if args.postgres:
        with postgres_database() as url:
            run(migrate(url), args.threads, args.rounds)
    else:
        root = Path(tempfile.mkdtemp(prefix="loom-drain-db-"))
        run(migrate(f"sqlite+aiosqlite:///{root / 'server.db'}"), args.threads, args.rounds)


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    main()
