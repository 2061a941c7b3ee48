"""Does one stream starve the others? 20 sessions streaming at once in one process.

Each of --sessions sessions (real Session, real provider SDK, thread saves on) sends one
message; the fake LLM server (its own process) answers each with --chunks text chunks
sent as fast as it can, so they arrive in bursts. Measured in the session process:

- worst in-stream gap: the longest wait between two text deltas of one session, as its
  subscribers see them (the first delta excluded);
- event-loop lag: a task that asks to wake every 2 ms records how late it wakes; the
  worst lateness and the total time the loop was held beyond 5 ms at a time; beside the
  worst lateness, the most CPU the loop's thread used while that task waited (on a
  loaded machine lateness includes waiting for a core; the CPU figure does not).
- wall and CPU (user + system, `time.process_time`) of the whole measured part.

Baseline in the same run: the same number of plain httpx2 streams of the same responses
(lines read as they come), the same gap and lag measures. With --before DIR the sessions
also run on that source tree, side by side.

    .venv/bin/python bench/stream_gaps.py [--sessions 20] [--chunks 400]
        [--provider openai] [--before /tmp/before] [--sample 5] [--profile out.prof]
        [--repo-map DIR]  (the sessions work in a copy of DIR, repo map on, as in use)
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from _fake_proc import FakeServerProcess, post_turns, run_on_tree, source_trees

MODELS = {
    "openai": "openai:gpt-4.1",
    "anthropic": "anthropic:claude-sonnet-4-6",
    "google": "google:gemini-2.5-pro",
}
PATHS = {
    "openai": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "google": "/v1beta/models/m:streamGenerateContent?alt=sse",
}
TICK = 0.002
UNCOPIED = shutil.ignore_patterns(".git", ".venv", "__pycache__", "node_modules", "*.pyc")


def answer(chunks: int) -> dict:
    return {"text": [f"word{i} and some more text in this chunk " for i in range(chunks)]}


class LagMonitor:
    """Wakes every TICK; records how late, and how much CPU the loop's thread used
    meanwhile: on a loaded machine a late wake-up may be the process waiting for a core,
    the CPU figure is the loop's own work (the lateness the load cannot explain)."""

    def __init__(self) -> None:
        self.late: list[float] = []
        self.busy: list[float] = []
        self.stalls: list[tuple[float, float]] = []

    async def run(self) -> None:
        import asyncio

        while True:
            start, cpu = time.perf_counter(), time.thread_time()
            await asyncio.sleep(TICK)
            end = time.perf_counter()
            self.busy.append(time.thread_time() - cpu)
            self.late.append(end - start - TICK)
            if end - start - TICK > 0.005:
                self.stalls.append((start + TICK, end))

    def figures(self) -> dict[str, float]:
        held = sum(late for late in self.late if late > 0.005)
        return {
            "lag_max": max(self.late, default=0.0),
            "lag_total": held,
            "lag_cpu_max": max(self.busy, default=0.0),
        }


def gaps_of(times: list[float]) -> float:
    return max((b - a for a, b in itertools.pairwise(times)), default=0.0)


# -- the measured process -----------------------------------------------------------------


def child(args: argparse.Namespace) -> None:
    import asyncio

    async def sessions() -> dict:
        from loom.config import load_config
        from loom.core.events import TextDeltaEvent
        from loom.llm.registry import create_provider
        from loom.session import SessionSpec, Workspace

        name = args.provider
        base = args.server_url + ("/v1" if name == "openai" else "")
        options = {"rules": "", "git_snapshot": False, "repo_map_tokens": 0, "compaction": False,
                   "decision_tokens": 0}  # fmt: skip
        if args.repo_map:  # as in use: each call fetches the map (built on a worker thread)
            del options["repo_map_tokens"]
        create_provider(name, api_key="bench", base_url=base)  # the SDK import, before timing
        project = Path(args.project)
        ws = Workspace(
            load_config(project, project_root=project),
            provider_factory=lambda m: create_provider(name, api_key="bench", base_url=base),
            session_options=options,
        )
        started = [
            await ws.start_session(SessionSpec(model=MODELS[name], tools=[], auto_approve=True))
            for _ in range(args.sessions)
        ]
        seen: list[list[float]] = [[] for _ in started]
        for index, session in enumerate(started):

            def on_event(event, times=seen[index]) -> None:
                if isinstance(event, TextDeltaEvent):
                    times.append(time.perf_counter())

            session.subscribe(on_event)
        monitor = LagMonitor()
        sampler = None
        if args.sample:
            from _loop_sampler import LoopSampler

            sampler = LoopSampler()
            sampler.start()
        watcher = asyncio.get_running_loop().create_task(monitor.run())
        profiler = None
        if args.profile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        begin, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(s.send_message("go") for s in started))
        wall, cpu = time.perf_counter() - begin, time.process_time() - cpu
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(args.profile)
        watcher.cancel()
        if sampler is not None:
            sampler.report(monitor.stalls, top=args.sample)
        await ws.shutdown()
        assert all(len(times) >= args.chunks // 2 for times in seen), [len(t) for t in seen]
        return {
            "gap": max(gaps_of(times) for times in seen),
            "wall": wall,
            "cpu": cpu,
            **monitor.figures(),
        }

    async def plain() -> dict:
        import httpx2

        url = args.server_url + PATHS[args.provider]
        body = {
            "model": "m",
            "stream": True,
            "max_tokens": 100,
            "messages": [{"role": "user", "content": "go"}],
        }
        seen: list[list[float]] = []

        async def one(client: httpx2.AsyncClient) -> None:
            times: list[float] = []
            seen.append(times)
            async with client.stream("POST", url, json=body) as reply:
                async for line in reply.aiter_lines():
                    if line.startswith("data:"):
                        times.append(time.perf_counter())

        monitor = LagMonitor()
        watcher = asyncio.get_running_loop().create_task(monitor.run())
        begin, cpu = time.perf_counter(), time.process_time()
        async with httpx2.AsyncClient(timeout=60) as client:
            await asyncio.gather(*(one(client) for _ in range(args.sessions)))
        wall, cpu = time.perf_counter() - begin, time.process_time() - cpu
        watcher.cancel()
        return {
            "gap": max(gaps_of(times) for times in seen),
            "wall": wall,
            "cpu": cpu,
            **monitor.figures(),
        }

    post_turns(args.server_url, [answer(args.chunks)] * args.sessions)
    measured = asyncio.run(sessions())
    post_turns(args.server_url, [answer(args.chunks)] * args.sessions)
    measured["baseline"] = asyncio.run(plain())
    print(json.dumps(measured))


# -- the driver ----------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--chunks", type=int, default=400)
    parser.add_argument("--provider", default="openai", choices=sorted(MODELS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", type=Path)
    parser.add_argument(
        "--sample",
        type=int,
        default=0,
        metavar="N",
        help="print what held the loop during the N longest stalls (stderr)",
    )
    parser.add_argument(
        "--profile",
        metavar="PATH",
        help="cProfile the sessions' turn into PATH (use with --repeat 1)",
    )
    parser.add_argument(
        "--repo-map",
        type=Path,
        metavar="DIR",
        help="the sessions work in a copy of DIR with the repo map on (default: an empty "
        "project, no map)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--server-url", help=argparse.SUPPRESS)
    parser.add_argument("--project", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if args.repo_map is not None and not args.repo_map.is_dir():
        parser.error(f"--repo-map {args.repo_map}: not a folder; give a project to copy")
    print(
        f"{args.sessions} sessions streaming {args.chunks} chunks each at once "
        f"({args.provider}), median of {args.repeat} runs; targets: gap <= 100 ms, "
        "loop lag max <= 50 ms"
    )
    with FakeServerProcess() as server:
        for label, src in source_trees(args.before):
            runs = []
            for _ in range(args.repeat):
                with tempfile.TemporaryDirectory() as home:
                    project = Path(home) / "project"
                    extra = ["--sample", str(args.sample)]
                    if args.repo_map:
                        shutil.copytree(args.repo_map, project, ignore=UNCOPIED)
                        extra.append("--repo-map=on")
                    else:
                        project.mkdir()
                    if args.profile:
                        extra += ["--profile", args.profile]
                    runs.append(
                        run_on_tree(
                            src,
                            __file__,
                            [
                                "--sessions",
                                str(args.sessions),
                                "--chunks",
                                str(args.chunks),
                                "--provider",
                                args.provider,
                                "--server-url",
                                server,
                                "--project",
                                str(project),
                                *extra,
                            ],
                            home,
                            show_stderr=bool(args.sample),
                        )
                    )
            load = os.getloadavg()[0]

            def med(key: str, rows: list[dict]) -> float:
                return statistics.median(row[key] for row in rows) * 1000

            base = [run["baseline"] for run in runs]
            print(f"  {label} (load {load:.2f})")
            for title, rows in (("sessions", runs), ("plain httpx2", base)):
                print(
                    f"    {title:<13} worst gap {med('gap', rows):6.1f} ms   lag max "
                    f"{med('lag_max', rows):6.1f} ms (loop CPU {med('lag_cpu_max', rows):5.1f})   "
                    f"held >5 ms: {med('lag_total', rows):6.1f} ms   wall {med('wall', rows):6.1f}"
                    f" ms   CPU {med('cpu', rows):6.1f} ms"
                )


if __name__ == "__main__":
    main()
