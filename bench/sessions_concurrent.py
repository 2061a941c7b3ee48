"""How many sessions fit in one process, and do they stay correct under concurrency?

Starts --sessions sessions in one process (one Workspace, real LocalThreadStore in
a temporary LOOM_HOME) and has each do --trips tool round trips in one turn, all at
once. The scripted model answers after a small random delay (0-2 ms), so the sessions
interleave. Checks that every session answered correctly and that every thread on disk
holds exactly its own messages, in order.

Prints wall time, the peak RSS of the process (ru_maxrss), and, measured in the same
run, the baseline RSS after imports and one warm-up session: the difference is what
the concurrent sessions cost.

    .venv/bin/python bench/sessions_concurrent.py [--sessions 100] [--trips 20]

Target (issue 3): 100 sessions x 20 round trips, all correct, peak RSS <= 300 MB
(peers run one process per session at 80-120 MB each).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from loom.config import load_config  # noqa: E402
from loom.llm.base import LlmRequest  # noqa: E402
from loom.llm.scripted import ScriptedProvider, ScriptedTurn, tool_call  # noqa: E402
from loom.session import SessionSpec, Workspace  # noqa: E402
from loom.tools.base import Risk, ToolContext, ToolResult  # noqa: E402


class EchoTool:
    name = "echo"
    description = "echo the text back"
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}}  # noqa: RUF012
    risk: Risk = "read"

    def permission_subject(self, args: dict) -> None:
        return None

    async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
        await asyncio.sleep(0)
        return ToolResult(f"echo {args.get('text')}")


def provider_for(index: int, trips: int, rng: random.Random) -> ScriptedProvider:
    def respond(request: LlmRequest) -> ScriptedTurn:
        done = sum(1 for m in request.messages[-2:] if m.role == "tool")
        step = len([m for m in request.messages if m.role == "tool"]) if done else 0
        if step < trips:
            call = tool_call("echo", {"text": f"s{index}-t{step}"}, id=f"s{index}c{step}")
            return ScriptedTurn(tool_calls=[call], delay=rng.random() * 0.002)
        return ScriptedTurn(text=f"session {index} finished", delay=rng.random() * 0.002)

    return ScriptedProvider([respond] * (trips + 1))


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def run(sessions: int, trips: int, root: Path) -> tuple[float, int]:
    from loom.store.local import LocalThreadStore

    rng = random.Random(7)
    providers = {}
    store = LocalThreadStore()
    options = {"rules": "", "git_snapshot": False, "repo_map_tokens": 0, "compaction": False,
                   "decision_tokens": 0}  # fmt: skip

    def factory(model: str) -> ScriptedProvider:
        return providers[int(model.rsplit("-", 1)[1])]  # "anthropic:bench-<index>"

    ws = Workspace(load_config(root, project_root=root), provider_factory=factory, store=store,
                   session_options=options)  # fmt: skip
    started = []
    for index in range(sessions):
        providers[index] = provider_for(index, trips, rng)
        session = await ws.start_session(
            SessionSpec(
                model=f"anthropic:bench-{index}",
                extra_tools=[EchoTool()],
                tools=["echo"],
                auto_approve=True,
            )
        )
        started.append(session)
    begin = time.perf_counter()
    answers = await asyncio.gather(*(s.send_message(f"go {i}") for i, s in enumerate(started)))
    elapsed = time.perf_counter() - begin
    failures = 0
    for index, (session, answer) in enumerate(zip(started, answers, strict=True)):
        expected = [f"echo s{index}-t{t}" for t in range(trips)]
        results = [m.content for m in session.get_history() if m.role == "tool"]
        ok = answer == f"session {index} finished" and results == expected
        await session.flush()
        saved = store.load(session.thread.id)
        on_disk = [m.content for m in saved.messages if m.role == "tool"] if saved else None
        ok = ok and on_disk == expected
        failures += 0 if ok else 1
    await ws.shutdown()
    return elapsed, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--trips", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["LOOM_HOME"] = home
        root = Path(home) / "project"
        root.mkdir()
        warm_elapsed, warm_failures = asyncio.run(run(1, args.trips, root))
        baseline = rss_mb()
        elapsed, failures = asyncio.run(run(args.sessions, args.trips, root))
        peak = rss_mb()
    total_trips = args.sessions * args.trips
    print(f"concurrent sessions: {args.sessions} x {args.trips} tool round trips in one process")
    print(f"  baseline (imports + 1 session): {baseline:6.1f} MB peak RSS, {warm_elapsed:.3f} s")
    print(
        f"  {args.sessions} sessions:                 {peak:6.1f} MB peak RSS, {elapsed:.3f} s"
        f" ({elapsed / total_trips * 1e3:.2f} ms per round trip overall)"
    )
    extra = peak - baseline
    print(f"  cost of the sessions: {extra:.1f} MB ({extra / args.sessions * 1024:.0f} KB each)")
    correct = args.sessions - failures
    print(f"  correct: {correct}/{args.sessions} (warm-up failures: {warm_failures})")
    verdict = "OK" if peak <= 300 and failures == 0 else "OVER"
    print(f"  target: all correct, peak RSS <= 300 MB: {verdict}")


if __name__ == "__main__":
    main()
