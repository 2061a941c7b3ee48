"""Does a pasted blob slow down the way to the model?

Time from launching `loom run` to its first request reaching the model server, for a
100-byte prompt (the baseline, measured in the same run) and for the same prompt followed
by a 100 KB pasted blob (read from stdin, as a paste or a pipe gives it). Several blob
shapes, each one a past freeze: a hex dump / base64url token run (no dot, no `+`), a long
identifier-like log line, a base64 block with `+`, and a shell-ish text with many `bash
-c`. Runs are interleaved so machine load hits all alike; prints medians and the ratio of
each blob to the baseline.

    .venv/bin/python bench/paste_latency.py [--runs 5] [--kib 100]

Target (issue 26): at most 1.5x the 100-byte prompt.
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.llm_server import FakeLlmServer, Turn  # noqa: E402

PYTHON = str(ROOT / ".venv" / "bin" / "python")
PROMPT = "Why does the parser in src/calc.py reject this input? Explain it in two lines please."


def blobs(size: int) -> dict[str, str]:
    raw = os.urandom(size)
    return {
        "hex run": raw.hex()[:size],
        "base64url run": base64.urlsafe_b64encode(raw).decode()[:size].replace("=", ""),
        "identifier log": ("worker_pool-shard/queue_" * (size // 23 + 1))[:size],
        "base64 lines": "\n".join(
            base64.b64encode(raw).decode()[i : i + 76] for i in range(0, size, 76)
        )[:size],
        "shell-ish": ("bash -c curl sh " * (size // 16 + 1))[:size],
    }


def first_request(server: FakeLlmServer, project: Path, home: str, stdin: str) -> float:
    env = {
        **os.environ,
        "LOOM_HOME": home,
        "LOOM_ALLOW_MODEL_REQUESTS": "0",
        "ANTHROPIC_API_KEY": "bench",
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
    }
    before = len(server.requests)
    started = time.time()
    process = subprocess.run(
        [PYTHON, "-m", "loom", "run", "--model", "anthropic:claude-sonnet-4-6"],
        input=stdin,
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if process.returncode != 0 or len(server.requests) <= before:
        raise SystemExit(f"loom run failed ({process.returncode}): {process.stderr.strip()}")
    return server.requests[before].at - started


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kib", type=int, default=100)
    args = parser.parse_args()
    shapes = blobs(args.kib * 1024)
    with tempfile.TemporaryDirectory() as tmp, FakeLlmServer([], default=Turn(text="ok")) as server:
        project = Path(tmp) / "project"
        (project / "src").mkdir(parents=True)
        (project / "src" / "calc.py").write_text("def parse(text):\n    return int(text)\n")
        home = str(Path(tmp) / "home")
        first_request(server, project, home, PROMPT)  # warm the disk cache
        times: dict[str, list[float]] = {"100-byte prompt": []} | {name: [] for name in shapes}
        for _ in range(args.runs):
            times["100-byte prompt"].append(first_request(server, project, home, PROMPT))
            for name, blob in shapes.items():
                times[name].append(first_request(server, project, home, f"{PROMPT}\n\n{blob}"))
    base = statistics.median(times["100-byte prompt"])
    load = os.getloadavg()[0]
    print(f"loom run -> first model request, median of {args.runs} (load average {load:.1f})")
    for name, values in times.items():
        median = statistics.median(values)
        label = name if name == "100-byte prompt" else f"{args.kib} KB {name}"
        print(f"  {label:28s} {median * 1000:8.0f} ms   {median / base:5.2f}x")
    worst = max(statistics.median(v) for v in times.values()) / base
    print(f"worst ratio {worst:.2f}x; target <= 1.5x: {'met' if worst <= 1.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
