"""MCP costs, measured against a baseline in the same run.

1. Session start: `Workspace.start_session` returning (the first prompt can be typed and sent) with
   3 stdio MCP servers configured vs none. Servers connect in the background, so the two
   should match; the time until their tools are ready is printed too.
2. Tool round trip: Loom's `file_read` called directly vs the same tool reached through
   MCP (`loom mcp serve` over stdio, called by Loom's own MCP client as
   `mcp__loom__file_read`). Prints medians, the overhead and the ratio.

    .venv/bin/python bench/mcp_bench.py [--runs 7] [--calls 200]

Needs tests/npm installed (scripts/setup) for server-everything; falls back to the
Python test server otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EVERYTHING = ROOT / "tests" / "npm" / "node_modules" / ".bin" / "mcp-server-everything"
BAD_SERVER = ROOT / "tests" / "mcp_client" / "bad_server.py"


def _servers(count: int) -> dict[str, Any]:
    if EVERYTHING.exists():
        return {f"s{i}": {"command": str(EVERYTHING)} for i in range(count)}
    return {f"s{i}": {"command": sys.executable, "args": [str(BAD_SERVER)]} for i in range(count)}


async def _start_once(project: Path, servers: dict[str, Any]) -> tuple[float, float]:
    from loom.config import load_config
    from loom.llm.scripted import ScriptedProvider
    from loom.session import SessionSpec, Workspace

    config = load_config(project, {"mcp": {"servers": servers}})
    workspace = Workspace(config, provider_factory=lambda _model: ScriptedProvider())
    spec = SessionSpec(
        model="anthropic:claude-sonnet-4-6",
        cwd=project,
        on_mcp_notice=lambda line: print("  notice:", line),
    )
    started = time.perf_counter()
    session = await workspace.start_session(spec)
    accepted = time.perf_counter() - started
    for hook in session.before_turn:  # what the first turn waits for: the MCP tools
        await hook()
    ready = time.perf_counter() - started
    await workspace.shutdown()
    await asyncio.sleep(0.5)  # let stopped servers exit before the next sample
    return accepted, ready


async def bench_start(project: Path, runs: int) -> None:
    rows: dict[str, list[tuple[float, float]]] = {"none": [], "3 stdio": []}
    await _start_once(project, {})  # warm-up: first imports
    for run in range(runs):  # interleaved, alternating order, so load hits both alike
        order = ["none", "3 stdio"] if run % 2 == 0 else ["3 stdio", "none"]
        for name in order:
            servers = _servers(3) if name == "3 stdio" else {}
            rows[name].append(await _start_once(project, servers))
    base = statistics.median(a for a, _ in rows["none"])
    kind = "server-everything" if EVERYTHING.exists() else "python test"
    print(f"session start, median of {runs} ({kind} servers):")
    for name, samples in rows.items():
        accepted = statistics.median(a for a, _ in samples)
        ready = statistics.median(r for _, r in samples)
        print(
            f"  {name:8} first prompt accepted {accepted * 1000:7.1f} ms"
            f"  (x{accepted / base:.2f})   tools ready {ready * 1000:7.1f} ms"
        )


async def bench_round_trip(project: Path, calls: int) -> None:
    from loom.config import load_config
    from loom.mcp_client import start_mcp
    from loom.paths import LoomPaths
    from loom.session.assembly.toolset import default_registry
    from loom.tools.base import ToolContext

    (project / "data.txt").write_text("line\n" * 200)
    serve = {"command": sys.executable, "args": ["-m", "loom", "mcp", "serve", "-C", str(project)]}
    config = load_config(project, {"mcp": {"servers": {"loom": serve}}})
    registry = default_registry(project, config)
    hub = start_mcp(config, registry, paths=LoomPaths.from_env())
    assert hub is not None
    await hub.wait_ready(60)
    direct, through = registry.get("file_read"), registry.get("mcp__loom__file_read")
    assert direct is not None and through is not None, hub.notices
    ctx = ToolContext(project_root=project)
    args = {"path": "data.txt"}
    samples: dict[str, list[float]] = {"direct": [], "mcp": []}
    for _ in range(calls):
        for name, tool in (("direct", direct), ("mcp", through)):
            started = time.perf_counter()
            result = await tool.run(args, ctx)
            samples[name].append(time.perf_counter() - started)
            assert not result.is_error, result.content
    await hub.aclose()
    d, m = (statistics.median(samples[k]) for k in ("direct", "mcp"))
    print(f"file_read round trip, median of {calls}:")
    print(f"  direct {d * 1e3:.3f} ms   via MCP (stdio) {m * 1e3:.3f} ms")
    print(f"  overhead {(m - d) * 1e3:.3f} ms per call (x{m / d:.1f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--calls", type=int, default=200)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        import os

        os.environ.setdefault("LOOM_HOME", str(Path(tmp) / "home"))
        project = Path(tmp) / "proj"
        project.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        asyncio.run(bench_start(project, options.runs))
        asyncio.run(bench_round_trip(project, options.calls))


if __name__ == "__main__":
    main()
