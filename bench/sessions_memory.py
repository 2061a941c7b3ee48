"""What does an idle session cost? --sessions sessions through `Workspace.start_session`.

One process, one Workspace (the real provider registry, an OpenAI key and endpoint from
the environment; no request is sent), --sessions sessions started one after another.
Prints the resident memory (RSS, after a garbage collection) with one session and with
all of them, the cost per session, the open file descriptors and the SDK clients held,
and the descriptors left open after every session was stopped. The baseline in the same
run is the one-session figure. With --before DIR the same runs on that source tree too.

    .venv/bin/python bench/sessions_memory.py [--sessions 1000] [--before /tmp/before]

Target (issue 25): 1,000 idle sessions <= 300 MB over the first.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from _fake_proc import run_on_tree, source_trees


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def child(args: argparse.Namespace) -> None:
    import asyncio
    import gc
    import json

    os.environ["OPENAI_API_KEY"] = "bench-key"
    os.environ["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"

    async def run() -> dict:
        from loom.config import load_config
        from loom.session import SessionSpec, Workspace

        project = Path(args.project)
        ws = Workspace(load_config(project, {"model.default": "openai:gpt-4.1"}))
        spec = SessionSpec(headless=True, cwd=project)
        sessions = [await ws.start_session(spec)]
        gc.collect()
        one, fds_one = rss_mb(), open_fds()
        for _ in range(args.sessions - 1):
            sessions.append(await ws.start_session(spec))
        gc.collect()
        many, fds_many = rss_mb(), open_fds()
        try:
            from loom.llm.clients import client_count

            clients = client_count()
        except ImportError:  # a tree from before shared clients: one per session
            clients = -1
        for session in sessions:
            await ws.stop_session(session.id)
        del sessions
        gc.collect()
        stopped = open_fds()
        await ws.shutdown()
        return {
            "one": one,
            "many": many,
            "fds_one": fds_one,
            "fds_many": fds_many,
            "fds_stopped": stopped,
            "clients": clients,
        }

    print(json.dumps(asyncio.run(run())))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--project", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    n = args.sessions
    print(f"{n} idle sessions through Workspace.start_session; target <= 300 MB over the first")
    for label, src in source_trees(args.before):
        with tempfile.TemporaryDirectory() as home:
            project = Path(home) / "project"
            project.mkdir()
            r = run_on_tree(src, __file__, ["--sessions", str(n), "--project", str(project)], home)
        over = r["many"] - r["one"]
        clients = "one per session" if r["clients"] < 0 else str(r["clients"])
        print(
            f"  {label} (load {os.getloadavg()[0]:.2f}): 1 session {r['one']:.0f} MB, {n}: "
            f"{r['many']:.0f} MB, +{over:.0f} MB over the first ({over * 1e3 / (n - 1):.0f} kB"
            f" each); fds {r['fds_one']} -> {r['fds_many']}, after stopping all "
            f"{r['fds_stopped']}; SDK clients: {clients}"
        )


if __name__ == "__main__":
    main()
