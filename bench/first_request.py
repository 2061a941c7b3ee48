"""Time to the first model request: a 100-byte prompt vs the same prompt with a 100 KB
pasted blob, through `loom run` (a real process, prompt on stdin) against the fake LLM
server (tests/fakes/llm_server.py). Runs alternate so machine load hits both alike;
prints each one's median and the ratio.

    .venv/bin/python bench/first_request.py [--runs 7] [--kib 100]

Target (issue 26): the blob at most 1.5x the 100-byte prompt. The blob is a hex dump
(no dot, no `+`: the shape that made the repo map's file-name scan quadratic); see
bench/paste_latency.py for the other shapes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.llm_server import FakeLlmServer, Turn

from paste_latency import PROMPT, first_request

SHORT = PROMPT + " Keep it short."  # 100 bytes


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--kib", type=int, default=100)
    args = parser.parse_args()
    blob = os.urandom(args.kib * 512).hex()
    pasted = f"{SHORT}\n\n{blob}"
    short: list[float] = []
    long: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, FakeLlmServer([], default=Turn(text="ok")) as server:
        project = Path(tmp) / "project"
        (project / "src").mkdir(parents=True)
        (project / "src" / "calc.py").write_text("def parse(text):\n    return int(text)\n")
        home = str(Path(tmp) / "home")
        first_request(server, project, home, SHORT)  # warm the disk cache
        for _ in range(args.runs):
            short.append(first_request(server, project, home, SHORT))
            long.append(first_request(server, project, home, pasted))
    base, blob_median = statistics.median(short), statistics.median(long)
    ratio = blob_median / base
    print(f"loom run -> first model request, median of {args.runs} "
          f"(load average {os.getloadavg()[0]:.1f})")  # fmt: skip
    print(f"  {len(SHORT.encode())}-byte prompt        {base * 1000:8.0f} ms")
    print(f"  + {len(blob) // 1024} KB pasted hex blob {blob_median * 1000:8.0f} ms   {ratio:.2f}x")
    print(f"target <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
