"""Sync server over HTTP on PostgreSQL with many threads: search, list, upserts.

    .venv/bin/python bench/server_http.py [--threads 100000] [--keep] [--reuse]

Creates a database, bulk-loads threads (bench/server_generate.py), starts `loom server`
as a subprocess and measures, over HTTP with a real client:
- GET /health (the baseline: HTTP + auth-free round trip on this machine),
- GET /api/threads (first page and deep keyset pages): target p95 <= 20 ms,
- GET /api/threads/search (rare, medium and common words, two-word queries): p95 <= 50 ms,
- PUT upserts from 8 concurrent clients (spread over 2 load-generator processes) vs 1
  client, against 1 and 2 server processes: target >= 300/s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.server_generate import Generator, populate

from loom.core.messages import UserMessage
from loom.core.thread import Thread

ADMIN = "postgresql://postgres@127.0.0.1:5432/test"
DB_NAME = "loom_bench"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def fmt(name: str, ms: list[float], baseline: float | None = None, target: str = "") -> str:
    p50, p95 = statistics.median(ms), pct(ms, 0.95)
    ratio = f"  x{p95 / baseline:5.1f} of /health p95" if baseline else ""
    return f"{name:<34} n={len(ms):<4} p50 {p50:6.2f} ms  p95 {p95:6.2f} ms{ratio}  {target}"


async def _admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(ADMIN)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def timed(client: httpx.Client, path: str, params: dict | None = None) -> tuple[float, dict]:
    start = time.perf_counter()
    response = client.get(path, params=params)
    elapsed = (time.perf_counter() - start) * 1000
    response.raise_for_status()
    return elapsed, response.json()


def start_server(url: str, home: Path, workers: int = 1) -> tuple[subprocess.Popen, str]:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "LOOM_DATABASE_URL": url, "LOOM_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "loom", "server", "--port", str(port), "--workers", str(workers)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(base + "/health", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("server did not start")


def pick_queries(gen: Generator) -> dict[str, list[str]]:
    words = gen.words
    return {
        "common word": words[5:15],
        "medium word": words[200:220],
        "rare word": words[3000:3020],
        "two words": [f"{words[i]} {words[i + 40]}" for i in range(30, 50)],
    }


async def _client_loop(
    base: str, token: str, index: int, stop: float, counts: list[int], conflicts: list[int]
) -> None:
    """One client: create a thread, keep appending with expected_version, start a new
    thread every 20 messages like real sessions."""
    rng = random.Random(index)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
        thread = Thread.new()
        thread.append(UserMessage(content=f"bench client {index}"))
        thread.touch()
        expected = 0
        while time.perf_counter() < stop:
            response = await client.put(
                f"/api/threads/{thread.id}",
                params={"expected_version": expected},
                content=thread.model_dump_json(),
            )
            if response.status_code == 409:
                conflicts[index] += 1
                return
            response.raise_for_status()
            counts[index] += 1
            expected = thread.version
            if len(thread.messages) > 20:
                thread = Thread.new()
                expected = 0
            thread.append(UserMessage(content=f"step {rng.random()}"))
            thread.touch()


def _client_process(base: str, token: str, first: int, clients: int, seconds: float) -> tuple:
    async def run() -> tuple[int, int]:
        counts, conflicts = [0] * (first + clients), [0] * (first + clients)
        stop = time.perf_counter() + seconds
        await asyncio.gather(
            *(
                _client_loop(base, token, i, stop, counts, conflicts)
                for i in range(first, first + clients)
            )
        )
        return sum(counts), sum(conflicts)

    return asyncio.run(run())


def upsert_rate(
    base: str, token: str, clients: int, seconds: float, processes: int = 1
) -> tuple[float, int]:
    """Upserts per second from `clients` concurrent clients (one connection each),
    spread over `processes` load-generator processes so the generator is not the limit."""
    from concurrent.futures import ProcessPoolExecutor

    per = [clients // processes + (1 if i < clients % processes else 0) for i in range(processes)]
    firsts = [sum(per[:i]) for i in range(processes)]
    started = time.perf_counter()
    if processes == 1:
        results = [_client_process(base, token, 0, clients, seconds)]
    else:
        with ProcessPoolExecutor(processes) as pool:
            futures = [
                pool.submit(_client_process, base, token, f, n, seconds)
                for f, n in zip(firsts, per, strict=True)
            ]
            results = [f.result() for f in futures]
    elapsed = time.perf_counter() - started
    return sum(r[0] for r in results) / elapsed, sum(r[1] for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=100_000)
    parser.add_argument("--reuse", action="store_true", help="use an existing loaded database")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--token", default=None, help="token when --reuse")
    args = parser.parse_args()
    url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{DB_NAME}"

    if not args.reuse:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)'))
        asyncio.run(_admin(f'CREATE DATABASE "{DB_NAME}"'))
        print(f"loading {args.threads} threads into PostgreSQL ...", flush=True)
        token = populate(url, args.threads)["token"]
        if args.keep:
            print(f"kept; rerun with: --reuse --keep --token {token}")
    else:
        token = args.token
    home = Path(tempfile.mkdtemp(prefix="loom-bench-"))
    proc, base = start_server(url, home)
    try:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
            for _ in range(30):  # warm up connections and caches
                client.get("/health")
                client.get("/api/threads", params={"limit": 50})
            health = [timed(client, "/health")[0] for _ in range(200)]
            base_p95 = pct(health, 0.95)
            print(f"\nPostgreSQL, {args.threads} threads, 1 server process, HTTP on loopback")
            print(fmt("GET /health (baseline)", health))

            first = [timed(client, "/api/threads", {"limit": 50})[0] for _ in range(200)]
            print(fmt("list first page (50)", first, base_p95, "target p95 <= 20 ms"))
            deep: list[float] = []
            cursor = None
            for _ in range(200):
                ms, page = timed(
                    client, "/api/threads", {"limit": 50, **({"cursor": cursor} if cursor else {})}
                )
                deep.append(ms)
                cursor = page["next_cursor"]
            print(fmt("list next pages (keyset, 50)", deep, base_p95, "target p95 <= 20 ms"))
            print(fmt("list all pages", first + deep, base_p95, "target p95 <= 20 ms"))

            all_search: list[float] = []
            hits_seen: dict[str, int] = {}
            for label, queries in pick_queries(Generator()).items():
                times: list[float] = []
                for _ in range(3):
                    for query in queries:
                        ms, result = timed(client, "/api/threads/search", {"q": query, "limit": 20})
                        times.append(ms)
                        hits_seen[label] = hits_seen.get(label, 0) + len(result["hits"])
                all_search += times
                print(fmt(f"search: {label}", times, base_p95))
            print(fmt("search: all", all_search, base_p95, "target p95 <= 50 ms"))

        one, _ = upsert_rate(base, token, 1, 5)
        print(f"{'upserts, 1 client (baseline)':<34} {one:7.0f} /s")
        eight, conflicts = upsert_rate(base, token, 8, 10, processes=2)
        print(
            f"{'upserts, 8 clients, server x1':<34} {eight:7.0f} /s  x{eight / one:.2f} "
            f"of 1 client  target >= 300/s  (unexpected 409s: {conflicts})"
        )
        proc.terminate()
        proc.wait(10)
        # The server is stateless: a second process on the same port and database.
        proc, base = start_server(url, home, workers=2)
        eight, conflicts = upsert_rate(base, token, 8, 10, processes=2)
        print(
            f"{'upserts, 8 clients, server x2':<34} {eight:7.0f} /s  x{eight / one:.2f} "
            f"of 1 client  target >= 300/s  (unexpected 409s: {conflicts})"
        )
        print(f"load average during the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    finally:
        proc.terminate()
        proc.wait(10)
        if not args.keep:
            asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)'))


if __name__ == "__main__":
    main()
