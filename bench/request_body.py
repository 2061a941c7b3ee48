"""What does building one request body cost as a conversation grows?

The providers' `request_body` (the bytes Loom sends: history encoded once per message,
then joined) for a conversation of the shape `long_session.py` drives: each turn a user
message, a tool call, its ~1.5 kB result and a short answer. The CPU time of each call is
taken at turns 10, 100, 250 and 500 (medians over turns +-5); no network, no SDK request.
With --before DIR the same runs on another source tree too, alternating, --repeat times.

    .venv/bin/python bench/request_body.py [--turns 500] [--repeat 5] [--before /tmp/before]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _fake_proc import run_on_tree, source_trees

CHECKPOINTS = (10, 100, 250, 500)
WINDOW = 5
PROVIDERS = ("openai", "anthropic", "google")
TOOL_OUTPUT = "\n".join(f"    line {i}: value = compute(alpha_{i}, beta_{i})" for i in range(36))


def child(turns: int) -> None:
    from loom.core.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
    from loom.llm.base import LlmRequest
    from loom.llm.registry import create_provider

    result: dict[str, list[float]] = {}
    for name in PROVIDERS:
        # an adapter: each one builds its body (request_body), which Provider does not name
        provider: Any = create_provider(name, api_key="bench", base_url="http://127.0.0.1:9")
        history: list[Message] = []
        times: list[float] = []
        for n in range(1, turns + 1):
            call = ToolCall(id=f"c{n}", tool_name="lookup", arguments_json={"key": f"item-{n}"})
            history += [
                UserMessage(content=f"Turn {n}: please look up item-{n} and check it."),
                AssistantMessage(content="", tool_calls=[call]),
                ToolMessage(tool_call_id=f"c{n}", tool_name="lookup", content=TOOL_OUTPUT),
                AssistantMessage(content="The values line up; nothing else to change. " * 3),
            ]
            request = LlmRequest(model="m", system="You are Loom.", messages=list(history))
            start = time.process_time()
            provider.request_body(request)
            times.append(time.process_time() - start)
        result[name] = times
    print(json.dumps(result))


def at(times: list[float], checkpoint: int) -> float:
    picked = times[max(0, checkpoint - 1 - WINDOW) : checkpoint + WINDOW]
    return statistics.median(picked) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a source tree to measure alongside")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.turns)
        return
    trees = source_trees(args.before)
    runs: dict[str, list[dict[str, list[float]]]] = {label: [] for label, _ in trees}
    with tempfile.TemporaryDirectory() as home:
        for _ in range(args.repeat):
            for label, src in trees:
                runs[label].append(run_on_tree(src, __file__, ["--turns", str(args.turns)], home))
    checkpoints = [c for c in CHECKPOINTS if c <= args.turns]
    print(f"request body CPU, microseconds per call, median of {args.repeat} runs")
    print(f"{'':28}" + "".join(f"{'turn ' + str(c):>11}" for c in checkpoints))
    medians: dict[tuple[str, str], list[float]] = {}
    for name in PROVIDERS:
        for label, _ in trees:
            row = [statistics.median(at(r[name], c) for r in runs[label]) for c in checkpoints]
            medians[(name, label)] = row
            print(f"{name + ' ' + label:28}" + "".join(f"{v:>11.0f}" for v in row))
        if len(trees) == 2:
            after, before = medians[(name, "after")], medians[(name, "before")]
            ratio = [a / b for a, b in zip(after, before, strict=True)]
            print(f"{name + ' after/before':28}" + "".join(f"{r:>10.2f}x" for r in ratio))


if __name__ == "__main__":
    main()
