"""Generate a team's worth of threads straight into a sync-server database (for benchmarks).

    .venv/bin/python bench/server_generate.py --url postgresql+asyncpg://postgres@127.0.0.1/db \
        --threads 100000

Rows are built with the server's own column code (loom.server.rows), so they are exactly
what the API would store, then bulk-loaded with COPY (PostgreSQL) or executemany (SQLite).
Words follow a Zipf-like distribution over a coding vocabulary, so some words are common,
most are rare, like real conversations.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import Table

from loom.core.clock import format_iso
from loom.core.ids import new_thread_id
from loom.core.thread import Thread
from loom.server.db import make_engine, session_factory
from loom.server.identity import create_token, create_user
from loom.server.migrate import upgrade
from loom.server.models import ThreadRow
from loom.server.rows import new_share_token, thread_columns

BASE_TEXT = (
    "fix bug test error handler login auth token session cache query index parser lexer "
    "refactor module function class method import export config deploy build docker "
    "kubernetes database migration schema table column async await thread lock retry "
    "timeout request response header payload json yaml toml python rust typescript react "
    "component state hook render server client socket stream buffer memory leak profile "
    "benchmark latency throughput logging metrics trace span commit branch merge rebase "
    "conflict review pipeline release version upgrade dependency package install"
)
BASE_WORDS = BASE_TEXT.split()
ORGS = 5
USERS_PER_ORG = 10


def vocabulary(size: int = 6000, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    words: list[str] = list(BASE_WORDS)
    consonants, vowels = "bcdfghjklmnprstvz", "aeiou"
    while len(words) < size:
        syllables = rng.randint(2, 4)
        word = "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(syllables))
        if word not in words:
            words.append(word)
    return words


class Generator:
    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary()
        # Zipf-like weights: word i is picked with weight 1/(i+1).
        self.weights = [1.0 / (i + 1) for i in range(len(self.words))]
        self.cum = []
        total = 0.0
        for w in self.weights:
            total += w
            self.cum.append(total)

    def sentence(self, low: int, high: int) -> str:
        count = self.rng.randint(low, high)
        return " ".join(self.rng.choices(self.words, cum_weights=self.cum, k=count))

    def thread(self, index: int, start: float) -> Thread:
        rng = self.rng
        messages: list[dict[str, Any]] = []
        for _ in range(rng.randint(2, 6)):
            messages.append({"role": "user", "content": self.sentence(8, 30)})
            messages.append({"role": "assistant", "content": self.sentence(20, 80)})
        title = messages[0]["content"][:80]
        moment = start + index * 30 + rng.random() * 20
        stamp = format_iso(datetime.fromtimestamp(moment, UTC))
        visibility = rng.choices(["organization", "private", "public"], [8, 1, 1])[0]
        return Thread.model_validate(
            {
                "id": new_thread_id(),
                "version": rng.randint(1, 40),
                "created_at": stamp,
                "updated_at": stamp,
                "last_activity_at": stamp,
                "git_branch": rng.choice(["main", "dev", f"feature/{self.rng.choice(self.words)}"]),
                "git_remote_url": f"github.com/acme/{rng.choice(self.words[:40])}",
                "git_commits": [f"{rng.getrandbits(160):040x}" for _ in range(rng.randint(0, 3))],
                "conversation": {"messages": messages},
                "metadata": {"title": title, "tags": []},
                "visibility": visibility,
            }
        )


async def setup_users(url: str) -> dict[str, Any]:
    """Orgs and users; returns the token of the first user and the (user, org) ids."""
    engine = make_engine(url)
    owners: list[tuple[int, int]] = []
    token = ""
    try:
        async with session_factory(engine)() as session:
            for org in range(ORGS):
                for n in range(USERS_PER_ORG):
                    user = await create_user(session, f"bench-{org}-{n}", f"bench-org-{org}")
                    owners.append((user.id, user.org_id))
                    if not token:
                        _, token = await create_token(session, user.name)
            await session.commit()
    finally:
        await engine.dispose()
    return {"token": token, "owners": owners}


def rows(count: int, owners: list[tuple[int, int]], seed: int = 1) -> list[dict[str, Any]]:
    gen = Generator(seed)
    start = time.time() - count * 30
    now = format_iso(datetime.now(UTC))
    out = []
    for i in range(count):
        owner_id, org_id = owners[i % len(owners)]
        thread = gen.thread(i, start)
        out.append(
            {
                "id": thread.id,
                "owner_id": owner_id,
                "org_id": org_id,
                "share_token": new_share_token(),
                "server_updated_at": now,
                "deleted_at": None,
                **thread_columns(thread),
            }
        )
    return out


COLUMNS = [column.name for column in ThreadRow.__table__.columns]


async def bulk_load(url: str, batch: list[dict[str, Any]]) -> None:
    if url.startswith("postgresql"):
        import asyncpg

        conn = await asyncpg.connect(url.replace("postgresql+asyncpg", "postgresql"))
        try:
            records = [tuple(r[c] for c in COLUMNS) for r in batch]
            await conn.copy_records_to_table("threads", records=records, columns=COLUMNS)
        finally:
            await conn.close()
        return
    engine = make_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.execute(cast("Table", ThreadRow.__table__).insert(), batch)
    finally:
        await engine.dispose()


async def analyze(url: str) -> None:
    if url.startswith("postgresql"):
        import asyncpg

        conn = await asyncpg.connect(url.replace("postgresql+asyncpg", "postgresql"))
        try:
            await conn.execute("VACUUM ANALYZE")  # all tables, thread_search included
        finally:
            await conn.close()


def populate(url: str, count: int, *, chunk: int = 5000, quiet: bool = False) -> dict[str, Any]:
    upgrade(url)
    info = asyncio.run(setup_users(url))
    started = time.perf_counter()
    for offset in range(0, count, chunk):
        batch = rows(min(chunk, count - offset), info["owners"], seed=offset + 1)
        asyncio.run(bulk_load(url, batch))
        if not quiet:
            print(
                f"  loaded {offset + len(batch):>7} threads "
                f"({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
    asyncio.run(analyze(url))
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", required=True)
    parser.add_argument("--threads", type=int, default=100_000)
    args = parser.parse_args()
    info = populate(args.url, args.threads)
    print(f"token for bench-0-0: {info['token']}")


if __name__ == "__main__":
    main()
