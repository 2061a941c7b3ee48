"""What does the agent loop cost per tool round trip?

One session, one user message, then N model responses that each ask for a no-op tool,
then a final answer: N tool round trips through the real Session (state machine,
events, context window, permission check, thread saves to a real LocalThreadStore in a
temporary LOOM_HOME, fsync included). Variants measured in the same run:

  full          the real thing, persistence on
  no-persist    same loop with saving switched off (isolates what persistence costs:
                the writer thread, serialisation, fsync)
  save-each     every save request written at once, in the loop (no writer thread,
                no coalescing): what the saver design avoids
  bare          baseline: a hand-written loop calling the same scripted provider and
                tool with no state machine, no events, no saves

Prints the median over --repeat runs of each, per-step cost, the ratio to the bare
loop, how many saves were requested and how many were actually written (saves
coalesce while one is in flight), and with --profile the functions that dominate.

    .venv/bin/python bench/agent_loop.py [--steps 1000] [--repeat 3] [--profile]
        [--before /tmp/before]

With --before DIR (a source tree, e.g. `git archive <rev> src | tar -x -C DIR`), the same
bench also runs on that tree, in the same run (its own process, before this one), so the
two µs/step figures can be compared under the same load.

Target (issue 3): 1,000 round trips with persistence on in at most 2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parents[1]
# LOOM_BENCH_SRC: the source tree to measure (set by --before for the "before" run).
sys.path.insert(0, os.environ.get("LOOM_BENCH_SRC", str(ROOT / "src")))

from loom.config import load_config  # noqa: E402
from loom.core.messages import UserMessage  # noqa: E402
from loom.llm.base import LlmRequest, collect  # noqa: E402
from loom.llm.scripted import ScriptedProvider, ScriptedTurn, tool_call  # noqa: E402
from loom.session import SessionSpec, Workspace  # noqa: E402
from loom.store.base import ThreadStore  # noqa: E402
from loom.tools.base import Risk, ToolContext, ToolResult  # noqa: E402

MODEL = "anthropic:claude-sonnet-4-6"
# The loop alone, as this bench has always measured it: no project instructions, git
# snapshots, repo map, summaries or decision-graph zone (each a cost of its own).
LOOP_ONLY = {"rules": "", "git_snapshot": False, "repo_map_tokens": 0, "compaction": False,
             "decision_tokens": 0}  # fmt: skip
CPU_SECONDS: list[float] = []  # the CPU time (all threads) of each run, last one last


class NoopTool:
    name = "noop"
    description = "does nothing"
    parameters = {"type": "object", "properties": {}}  # noqa: RUF012
    risk: Risk = "read"

    def permission_subject(self, args: dict) -> None:
        return None

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        return ToolResult("ok")


def script(steps: int) -> ScriptedProvider:
    counter = iter(range(steps + 1))

    def respond(request: LlmRequest) -> ScriptedTurn:
        n = next(counter)
        if n < steps:
            return ScriptedTurn(text="", tool_calls=[tool_call("noop", {}, id=f"c{n}")])
        return ScriptedTurn(text="done")

    return ScriptedProvider([respond] * (steps + 1))


class NullStore:
    """Keeps nothing: the loop's own cost, without saving."""

    def save(self, thread) -> None:
        pass

    def load(self, thread_id: str):
        return None

    def resolve(self, ref: str) -> str:
        return ref

    def acquire_writer(self, thread_id: str) -> NullStore:
        return self  # a lock nobody else wants

    def release(self) -> None:
        pass


async def run_session(
    steps: int, persist: bool, root: Path, each: bool = False
) -> tuple[float, dict]:
    from loom.store.local import LocalThreadStore

    provider = script(steps)
    # NullStore is a partial store: it saves nothing
    store = LocalThreadStore() if persist else cast("ThreadStore", NullStore())
    ws = Workspace(
        load_config(root, project_root=root),
        provider_factory=lambda m: provider,
        store=store,
        session_options={**LOOP_ONLY, "max_tool_rounds": steps + 1},
    )
    session = await ws.start_session(
        SessionSpec(model=MODEL, extra_tools=[NoopTool()], tools=["noop"], auto_approve=True)
    )
    if not persist:
        session._saver.request = lambda: None  # bench only: no writer-thread handoffs
    if each:

        def save_now() -> None:  # bench only: the naive design, one full write per step
            session.thread.touch()
            store.save(session.thread)

        session._saver.request = save_now
    started, cpu = time.perf_counter(), time.process_time()
    answer = await session.send_message("go")
    elapsed = time.perf_counter() - started
    CPU_SECONDS.append(time.process_time() - cpu)
    assert answer == "done", answer
    assert len(session.get_history()) == 2 + 2 * steps + 0  # user, (call, result) * N, answer
    saver = session._saver
    stats = {"requested": saver.requests, "written": saver.writes}
    if persist:
        saved = store.load(session.thread.id)
        assert saved is not None and len(saved.messages) == len(session.get_history())
    await ws.shutdown()
    return elapsed, stats


async def run_bare(steps: int, root: Path) -> float:
    provider = script(steps)
    tool = NoopTool()
    ctx = ToolContext(project_root=root)
    messages: list = [UserMessage(content="go")]
    started, cpu = time.perf_counter(), time.process_time()
    while True:
        response = await collect(provider.stream(LlmRequest(model="m", messages=messages)))
        if not response.tool_calls:
            break
        for call in response.tool_calls:
            await tool.run(call.arguments_json, ctx)
    CPU_SECONDS.append(time.process_time() - cpu)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--before", type=Path, help="a source tree to measure in the same run")
    parser.add_argument("--no-save-each", action="store_true", help="skip the save-each variant")
    args = parser.parse_args()
    if args.before is not None:
        src = args.before / "src" if (args.before / "src").is_dir() else args.before
        print(f"== before ({src}), load {os.getloadavg()[0]:.2f}", flush=True)
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--steps",
                str(args.steps),
                "--repeat",
                str(args.repeat),
                *(["--no-save-each"] if args.no_save_each else []),
            ],
            env={**os.environ, "LOOM_BENCH_SRC": str(src)},
            check=True,
        )
        print(f"== after (this checkout), load {os.getloadavg()[0]:.2f}", flush=True)

    with tempfile.TemporaryDirectory() as home:
        os.environ["LOOM_HOME"] = home
        root = Path(home) / "project"
        root.mkdir()
        results: dict[str, list[float]] = {
            "full": [],
            "no-persist": [],
            "save-each": [],
            "bare": [],
        }
        cpu: dict[str, list[float]] = {name: [] for name in results}
        saves: list[dict] = []
        for attempt in range(args.repeat):
            elapsed, stats = asyncio.run(run_session(args.steps, True, root))
            results["full"].append(elapsed)
            cpu["full"].append(CPU_SECONDS[-1])
            saves.append(stats)
            results["no-persist"].append(asyncio.run(run_session(args.steps, False, root))[0])
            cpu["no-persist"].append(CPU_SECONDS[-1])
            if attempt == 0 and not args.no_save_each:  # slow: one fsync'd write per step
                each = asyncio.run(run_session(args.steps, True, root, each=True))[0]
                results["save-each"].append(each)
                cpu["save-each"].append(CPU_SECONDS[-1])
            results["bare"].append(asyncio.run(run_bare(args.steps, root)))
            cpu["bare"].append(CPU_SECONDS[-1])

        bare = statistics.median(results["bare"])
        bare_cpu = statistics.median(cpu["bare"])
        print(
            f"agent loop: {args.steps} tool round trips, median of {args.repeat} runs"
            f" (save-each: one run), load {os.getloadavg()[0]:.2f}"
        )
        for name, values in results.items():
            if not values:
                continue
            median = statistics.median(values)
            cpu_median = statistics.median(cpu[name])
            print(
                f"  {name:<11} {median:7.3f} s total  {median / args.steps * 1e6:8.1f} µs/step"
                f"  x{median / bare:6.1f} vs bare   CPU {cpu_median / args.steps * 1e6:8.1f}"
                f" µs/step  x{cpu_median / bare_cpu:6.1f} vs bare"
            )
        last = saves[-1]
        print(f"  saves: {last['requested']} requested, {last['written']} written (coalesced)")
        full = statistics.median(results["full"])
        verdict = "OK" if full <= 2.0 else "OVER"
        print(f"  target <= 2.0 s with persistence: {full:.3f} s  {verdict}")

        if args.profile:
            profiler = cProfile.Profile(time.thread_time)  # the loop thread's CPU
            profiler.enable()
            asyncio.run(run_session(args.steps, True, root))
            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
            print(out.getvalue())


if __name__ == "__main__":
    main()
