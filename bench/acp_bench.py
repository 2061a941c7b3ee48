"""ACP benchmarks, each next to a baseline measured in the same run.

    .venv/bin/python bench/acp_bench.py [--runs 10] [--chunks 2000]

1. Start-up: from spawning `loom acp` to the `initialize` answer, and to a first
   `session/new` ready (median of --runs), next to `python -c pass` and `loom --version`
   spawned the same way.
2. Per-chunk overhead from the session bus to the editor: text deltas published on a
   live session's bus reach an ACP client (the SDK's own client side, over a real pipe,
   JSON-RPC framing and pydantic models included); the baseline is a plain bus callback
   in the same process. Median and p95 per chunk.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

PYTHON = sys.executable


def quantiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def spawn_time(args: list[str], runs: int, env: dict[str, str]) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(args, env=env, check=True, capture_output=True)
        out.append(time.perf_counter() - start)
    return out


async def acp_start(env: dict[str, str], cwd: Path) -> tuple[float, float]:
    from acp import PROTOCOL_VERSION, Client, spawn_agent_process

    class Quiet:
        async def session_update(self, **_: Any) -> None:
            pass

        async def request_permission(self, **_: Any) -> Any:
            raise RuntimeError("not in this bench")

        def on_connect(self, conn: Any) -> None:
            pass

    start = time.perf_counter()
    async with spawn_agent_process(
        lambda _a: cast("Client", Quiet()), PYTHON, "-m", "loom", "acp", env=env, cwd=cwd
    ) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        initialized = time.perf_counter() - start
        await conn.new_session(cwd=str(cwd), mcp_servers=[])
        ready = time.perf_counter() - start
    return initialized, ready


async def chunk_overhead(chunks: int, cwd: Path) -> tuple[list[float], list[float]]:
    """(ACP client latencies, plain bus callback latencies) in seconds per chunk."""
    from acp.agent.connection import AgentSideConnection
    from acp.client.connection import ClientSideConnection

    from acp import Agent
    from acp import Client as AcpClient
    from loom.acp.live import LiveSession
    from loom.core.events import TextDeltaEvent
    from loom.llm.scripted import ScriptedProvider
    from loom.session import SessionSpec, Workspace

    workspace = Workspace.open(cwd=cwd, provider_factory=lambda _m: ScriptedProvider(["ok"]))
    session = await workspace.start_session(SessionSpec(model="anthropic:claude-sonnet-4-6"))
    sent: dict[str, float] = {}
    acp_latency: list[float] = []
    arrived = asyncio.Event()

    class Client:
        async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
            text = getattr(getattr(update, "content", None), "text", "")
            if text in sent:
                acp_latency.append(time.perf_counter() - sent[text])
                arrived.set()

        async def request_permission(self, **_: Any) -> Any:
            raise RuntimeError("not in this bench")

        def on_connect(self, conn: Any) -> None:
            pass

    # two real pipes between an agent-side and a client-side connection in this process
    loop = asyncio.get_running_loop()

    async def pipe_pair() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        read_fd, write_fd = os.pipe()
        reader = asyncio.StreamReader(limit=1 << 24)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", 0)
        )

        class Proto(asyncio.streams.FlowControlMixin, asyncio.Protocol):
            pass

        transport, proto = await loop.connect_write_pipe(Proto, os.fdopen(write_fd, "wb", 0))
        return reader, asyncio.StreamWriter(transport, proto, None, loop)

    to_client_r, to_client_w = await pipe_pair()
    to_agent_r, to_agent_w = await pipe_pair()
    # the agent side only sends here, and the client answers only what the bench needs
    agent_conn = AgentSideConnection(
        lambda _c: cast("Agent", None), to_client_w, to_agent_r, listening=True
    )
    ClientSideConnection(cast("AcpClient", Client()), to_agent_w, to_client_r)
    live = LiveSession(workspace, session, agent_conn, None)
    for i in range(chunks):  # one at a time: latency, not queueing behind a burst
        text = f"chunk {i} "
        arrived.clear()
        sent[text] = time.perf_counter()
        session.publish(TextDeltaEvent(session_id=session.id, text=text))
        await asyncio.wait_for(arrived.wait(), 10)

    bus_latency: list[float] = []
    stamps: dict[str, float] = {}
    unsubscribe = session.subscribe(
        lambda e: (
            bus_latency.append(time.perf_counter() - stamps[e.text])
            if isinstance(e, TextDeltaEvent) and e.text in stamps
            else None
        )
    )
    for i in range(chunks):
        text = f"bus {i} "
        stamps[text] = time.perf_counter()
        session.publish(TextDeltaEvent(session_id=session.id, text=text))
    unsubscribe()
    await live.close()
    await workspace.shutdown()
    return acp_latency, bus_latency


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "proj"
        cwd.mkdir()
        env = {**os.environ, "LOOM_HOME": str(home), "ANTHROPIC_API_KEY": "bench-key"}
        os.environ["LOOM_HOME"] = str(home)
        base = spawn_time([PYTHON, "-c", "pass"], args.runs, env)
        version = spawn_time([PYTHON, "-m", "loom", "--version"], args.runs, env)
        starts = [asyncio.run(acp_start(env, cwd)) for _ in range(args.runs)]
        init = [s[0] for s in starts]
        ready = [s[1] for s in starts]
        print(f"start-up, median of {args.runs} (ms):")
        for name, samples in (
            ("python -c pass", base),
            ("loom --version", version),
            ("loom acp: initialize answered", init),
            ("loom acp: first session/new ready", ready),
        ):
            print(f"  {name:<36} {statistics.median(samples) * 1000:8.0f}")
        ratio = statistics.median(init) / statistics.median(base)
        print(f"  initialize / python -c pass: {ratio:.1f}x")
        acp, bus = asyncio.run(chunk_overhead(args.chunks, cwd))
        (am, ap), (bm, bp) = quantiles(acp), quantiles(bus)
        print(f"per chunk, {args.chunks} text deltas (ms):")
        print(
            f"  bus callback (baseline)             median {bm * 1000:7.3f}   p95 {bp * 1000:7.3f}"
        )
        print(
            f"  bus -> ACP client over a pipe       median {am * 1000:7.3f}   p95 {ap * 1000:7.3f}"
        )


if __name__ == "__main__":
    main()
