"""What does one save of a long thread cost?

A thread grown turn by turn like `long_session.py`'s (per turn: a user message, an
assistant tool call, a ~1.5 kB tool result, an answer), saved after every turn through
the real LocalThreadStore (file durably written, two fsyncs, index updated) in a
temporary LOOM_HOME, the way the session's saver does it (a detached copy of the
thread). Prints, at turns 10/100/250/500/1000, the CPU time of one save (user and
system, over --saves saves) and the file size. Run in its own process per tree.

    .venv/bin/python bench/save_cost.py [--saves 200] [--before /tmp/before]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _fake_proc import source_trees

CHECKPOINTS = (10, 100, 250, 500, 1000)
TOOL_OUTPUT = "\n".join(f"    line {i}: value = compute(alpha_{i}, beta_{i})" for i in range(36))


def child(saves: int) -> None:
    from loom.core.messages import AssistantMessage, ToolCall, ToolMessage, Usage, UserMessage
    from loom.core.thread import Thread
    from loom.session.runtime.saver import _detached_copy  # pyright: ignore[reportPrivateUsage]
    from loom.store.local import LocalThreadStore

    store = LocalThreadStore()
    thread = Thread.new(workspace_root="/tmp/project", provider="anthropic", model="m")

    def add_turn(n: int) -> None:
        usage = Usage(input_tokens=100, output_tokens=10)
        call = ToolCall(id=f"c{n}", tool_name="lookup", arguments_json={"key": f"item-{n}"})
        thread.append(UserMessage(content=f"Turn {n}: please look up item-{n}.", id=f"u{n}"))
        thread.append(AssistantMessage(tool_calls=[call], usage=usage, model="m"))
        thread.append(ToolMessage(content=f"item-{n}:\n{TOOL_OUTPUT}", tool_call_id=f"c{n}",
                                  tool_name="lookup"))  # fmt: skip
        thread.append(AssistantMessage(content=f"Turn {n}: fine. " * 8, usage=usage, model="m"))

    results: dict[str, dict[str, float]] = {}
    turn = 0
    for checkpoint in CHECKPOINTS:
        while turn < checkpoint:
            turn += 1
            add_turn(turn)
            store.save(_detached_copy(thread))
        # `saves` more saves at this size: one new message each (as a step of a turn)
        start, cpu = os.times(), time.process_time()
        for i in range(saves):
            thread.append(AssistantMessage(content=f"step {i}", model="m"))
            store.save(_detached_copy(thread))
        end = os.times()
        del thread.conversation.messages[-saves:]  # back to `checkpoint` turns
        results[str(checkpoint)] = {
            "cpu_ms": (time.process_time() - cpu) / saves * 1000,
            "user_ms": (end.user - start.user) / saves * 1000,
            "sys_ms": (end.system - start.system) / saves * 1000,
            "mb": store.path_for(thread.id).stat().st_size / 1e6,
        }
    print(json.dumps(results))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--before", type=Path, help="a source tree to measure in the same run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.saves)
        return
    print(f"save cost: {args.saves} saves per checkpoint, load {os.getloadavg()[0]:.2f}")
    rows: dict[str, dict[str, dict[str, float]]] = {}
    for label, src in source_trees(args.before):
        with tempfile.TemporaryDirectory() as home:
            env = {**os.environ, "LOOM_HOME": home, "PYTHONPATH": str(src)}
            started = time.perf_counter()
            out = subprocess.run(
                [sys.executable, __file__, "--child", "--saves", str(args.saves)],
                env=env, capture_output=True, text=True, check=True,
            )  # fmt: skip
        rows[label] = json.loads(out.stdout.strip().splitlines()[-1])
        took = time.perf_counter() - started
        print(f"  {label} ({took:.0f} s, load {os.getloadavg()[0]:.2f})")
        print("    turn          " + "".join(f"{c:>9}" for c in CHECKPOINTS))
        for key, name in (("mb", "file MB"), ("cpu_ms", "cpu ms/save"), ("user_ms", "user ms"),
                          ("sys_ms", "sys ms")):  # fmt: skip
            print(
                f"    {name:<14}"
                + "".join(f"{rows[label][str(c)][key]:>9.2f}" for c in CHECKPOINTS)
            )
        first = rows[label][str(CHECKPOINTS[0])]["cpu_ms"]
        print("    x turn 10     " + "".join(
            f"{rows[label][str(c)]['cpu_ms'] / first:>9.2f}" for c in CHECKPOINTS))  # fmt: skip
    if len(rows) == 2:
        print("    before/after  " + "".join(
            f"{rows['before'][str(c)]['cpu_ms'] / rows['after'][str(c)]['cpu_ms']:>8.2f}x"
            for c in CHECKPOINTS))  # fmt: skip


if __name__ == "__main__":
    main()
