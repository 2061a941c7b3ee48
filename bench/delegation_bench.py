"""What do sub-agents and lifecycle hooks cost?

1. Sub-agents: a parent whose first answer asks for 4 `task` calls, each child answering
   after --latency seconds of (simulated) model time, against the fake LLM server
   (tests/fakes, the real SDK and HTTP). Wall time of the parent's turn with
   `[agents] max_parallel = 4` (the children run together) against max_parallel = 1
   (one after another), and the baseline in the same run: the same model latency with
   no children (the parent alone answers 4 times, one after another). The overhead per
   child is what remains after the model time.
2. Hooks: a session making --calls no-op tool calls (scripted model, real Session and
   tool runner), without hooks, with a PreToolUse hook whose matcher matches no tool,
   and with an empty PreToolUse hook (`true`) on every call: the per-call cost of
   starting one hook process.

    .venv/bin/python bench/delegation_bench.py [--latency 0.5] [--calls 40] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn  # noqa: E402

CHILDREN = 4


def configure(home: Path, text: str) -> None:
    path = home / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def project(base: Path) -> Path:
    root = base / "proj"
    root.mkdir(exist_ok=True)
    (root / ".loom.toml").write_text(
        "[repo]\nmap_tokens = 0\nwatch_enabled = false\n[context]\ndecision_tokens = 0\n"
        "[checkpoints]\nenabled = false\n"
    )
    return root


# -- 1. sub-agents --------------------------------------------------------------------


async def parent_turn(root: Path, server: FakeLlmServer, latency: float, children: bool) -> float:
    from loom.session import SessionSpec, Workspace

    if children:
        calls = [FakeToolCall("task", {"description": f"part {i}", "prompt": f"Do part {i}"})
                 for i in range(CHILDREN)]  # fmt: skip
        server.add(Turn(tool_calls=calls), Turn(text="all parts done"))
        for i in range(CHILDREN):
            server.for_first_message(f"Do part {i}", Turn(text=f"part {i} done", delay=latency))
    else:  # the baseline: the same model time, one session, no children
        look = FakeToolCall("directory_list", {})
        server.add(*[Turn(tool_calls=[look], delay=latency) for _ in range(CHILDREN)],
                   Turn(text="all parts done"))  # fmt: skip
    ws = Workspace.open(root)
    try:
        session = await ws.start_session(SessionSpec(cwd=root, auto_approve=True))
        started = time.perf_counter()
        await session.send_message("do all parts")
        took = time.perf_counter() - started
    finally:
        await ws.shutdown()
    server._state.by_first_message.clear()
    return took


def bench_children(base: Path, home: Path, latency: float, repeat: int) -> None:
    root = project(base)
    with FakeLlmServer() as server:
        os.environ.update({"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": server.base_url})
        results: dict[str, list[float]] = {"parallel": [], "series": [], "baseline": []}
        asyncio.run(parent_turn(root, server, 0.0, True))  # warm up: SDK import, caches
        for _ in range(repeat):
            configure(home, "[agents]\nmax_parallel = 4\n")
            results["parallel"].append(asyncio.run(parent_turn(root, server, latency, True)))
            configure(home, "[agents]\nmax_parallel = 1\n")
            results["series"].append(asyncio.run(parent_turn(root, server, latency, True)))
            results["baseline"].append(asyncio.run(parent_turn(root, server, latency, False)))
    configure(home, "")
    par, ser, base_t = (statistics.median(results[k]) for k in ("parallel", "series", "baseline"))
    print(f"\n1. parent with {CHILDREN} children, {latency:.2f} s model latency per child "
          f"(median of {repeat})")  # fmt: skip
    print(f"   4 in parallel (max_parallel 4) {par:7.3f} s   model time on the critical "
          f"path {latency:.2f} s")  # fmt: skip
    print(f"   4 in series   (max_parallel 1) {ser:7.3f} s   model time {CHILDREN * latency:.2f} s")
    print(f"   baseline: no children, {CHILDREN} answers of the same latency {base_t:7.3f} s")
    print(
        f"   speed-up parallel vs series: {ser / par:.2f}x; per-child overhead in series "
        f"{(ser - CHILDREN * latency) / CHILDREN * 1000:.0f} ms (start, brief, save, stop)"
    )


# -- 2. hooks -------------------------------------------------------------------------


async def tool_calls(root: Path, calls: int) -> float:
    from loom.config import load_config
    from loom.llm.scripted import ScriptedProvider, ScriptedTurn, tool_call
    from loom.session import SessionSpec, Workspace

    turns = [ScriptedTurn(tool_calls=[tool_call("directory_list", {})]) for _ in range(calls)]
    provider = ScriptedProvider([*turns, "done"])
    ws = Workspace(load_config(root), provider_factory=lambda model: provider)
    try:
        session = await ws.start_session(SessionSpec(cwd=root, auto_approve=True))
        started = time.perf_counter()
        await session.send_message("list it again and again")
        return time.perf_counter() - started
    finally:
        await ws.shutdown()


def bench_hooks(base: Path, home: Path, calls: int, repeat: int) -> None:
    root = project(base)
    variants = {
        "no hooks": "",
        "PreToolUse, matcher fits no tool": '[[hooks.PreToolUse]]\nmatcher = "nope"\n'
                                            'command = "true"\n',
        "PreToolUse `true` on every call": '[[hooks.PreToolUse]]\ncommand = "true"\n',
    }  # fmt: skip
    asyncio.run(tool_calls(root, 2))  # warm up
    per_call: dict[str, float] = {}
    for name, text in variants.items():
        configure(home, text)
        runs = [asyncio.run(tool_calls(root, calls)) for _ in range(repeat)]
        per_call[name] = statistics.median(runs) / calls
    configure(home, "")
    print(f"\n2. {calls} tool calls per run, median of {repeat}: time per call")
    baseline = per_call["no hooks"]
    for name, value in per_call.items():
        extra = "" if name == "no hooks" else f"   ({(value - baseline) * 1000:+.2f} ms)"
        print(f"   {name:<34} {value * 1000:7.2f} ms{extra}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home = base / "home"
        os.environ["LOOM_HOME"] = str(home)
        os.environ["LOOM_ALLOW_MODEL_REQUESTS"] = "0"
        print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
        bench_children(base, home, args.latency, args.repeat)
        bench_hooks(base, home, args.calls, args.repeat)
        print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
