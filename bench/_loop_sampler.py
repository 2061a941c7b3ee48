"""Bench helper: what held the event loop during its longest stalls.

A thread samples the loop thread's stack (`sys._current_frames`) every half millisecond;
given the stalls a lag monitor saw (start, end), `report` prints, for the longest ones,
the innermost frames most often seen inside them (asyncio's own frames left out). The
switch interval is lowered so the sampler gets the GIL while the loop runs Python code.
"""

from __future__ import annotations

import collections
import sys
import threading
import time
from typing import TextIO

INTERVAL_S = 0.0005


class LoopSampler:
    def __init__(self) -> None:
        self.loop_thread = threading.get_ident()  # built on the loop's thread
        self.samples: list[tuple[float, tuple[str, ...]]] = []
        self.begin = time.perf_counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        sys.setswitchinterval(INTERVAL_S)
        self.begin = time.perf_counter()
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            frame = sys._current_frames().get(self.loop_thread)
            now = time.perf_counter()
            stack = []
            while frame is not None:
                code = frame.f_code
                where = code.co_filename.split("site-packages/")[-1].split("src/")[-1]
                stack.append(f"{where}:{frame.f_lineno}:{code.co_name}")
                frame = frame.f_back
            self.samples.append((now, tuple(stack)))
            time.sleep(INTERVAL_S)

    def report(self, stalls: list[tuple[float, float]], top: int, out: TextIO = sys.stderr) -> None:
        self._stop.set()
        print(
            "stalls (ms from start + length):",
            " ".join(f"{1000 * (a - self.begin):.0f}+{1000 * (b - a):.0f}" for a, b in stalls),
            file=out,
        )
        for start, end in sorted(stalls, key=lambda s: s[0] - s[1])[:top]:
            inside = [stack for t, stack in self.samples if start <= t <= end]
            print(
                f"-- stall at {1000 * (start - self.begin):.0f} ms: "
                f"{1000 * (end - start):.1f} ms, {len(inside)} samples",
                file=out,
            )
            counts = collections.Counter(
                " <- ".join([f for f in stack if "asyncio/" not in f][:8]) for stack in inside
            )
            for where, n in counts.most_common(6):
                print(f"  {n:4d} {where}", file=out)
