"""The context build of one long autonomous turn past the context window, per step.

A `loom run` that works through hundreds of tool rounds in one turn outgrows the window:
every model call then keeps the turn's question and its newest rounds. That cut used to
walk the whole turn on every step (quadratic in its rounds). This builds the context of
such a turn (an 8,000-token window, ~90-token tool results) after every round, for 1,000
and 4,000 rounds, and prints the CPU per step; `--before DIR` runs another source tree
in the same run.

    .venv/bin/python bench/long_turn_context.py [--before /tmp/main-src] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _fake_proc import run_on_tree, source_trees

ROUNDS = (1_000, 4_000)


def per_step_us(rounds: int) -> float:
    from loom.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
    from loom.session.runtime.context import ContextWindow

    window = ContextWindow(context_window=8_000, reserved_output=500, system_prompt="sys")
    conversation: list = [UserMessage(content="run the whole migration")]
    started = time.process_time()
    for n in range(rounds):
        call = ToolCall(id=f"m{n}", tool_name="echo")
        conversation += [
            AssistantMessage(content="", tool_calls=[call]),
            ToolMessage(tool_call_id=f"m{n}", tool_name="echo", content="row " * 80),
        ]
        window.build(conversation)
    return (time.process_time() - started) / rounds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--before", type=Path, help="a source tree to measure in the same run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps({str(r): per_step_us(r) for r in ROUNDS}))
        return
    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as home:
        for _ in range(args.repeat):  # alternating trees, so the load hits both alike
            for label, src in source_trees(args.before):
                row = run_on_tree(src, __file__, [], home)
                for rounds, us in row.items():
                    results.setdefault(label, {}).setdefault(rounds, []).append(us)
    for label, rows in results.items():
        text = ", ".join(
            f"{rounds} rounds {statistics.median(v):,.0f} µs" for rounds, v in rows.items()
        )
        print(f"{label}: CPU per step (median of {args.repeat}): {text}")
    if "before" in results:
        ratios = ", ".join(
            f"{statistics.median(results['after'][r]) / statistics.median(v):.3f}×"
            for r, v in results["before"].items()
        )
        print(f"after / before: {ratios}", file=sys.stdout)


if __name__ == "__main__":
    main()
