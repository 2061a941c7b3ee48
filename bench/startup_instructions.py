"""Loom's own start-up of `loom run`, counted in instructions (issue 25, "Scale").

The strict probe of bench/run_startup.py (OWN_CPU_PROBE: the SDK imported, then the
console entry point runs `loom run -p "say hi" --model ...` until its first connection to
the model server) under valgrind's callgrind, with counting switched on right after the
SDK's import and the process ended at the first connect. Instructions, unlike CPU time,
hardly move with the load of a shared machine. No server is needed: nothing is sent.

    .venv/bin/python bench/startup_instructions.py [--provider openai] [--runs 3]
        [--before DIR]

With --before DIR (a tree with a src folder, e.g. `git worktree add /tmp/x main`) that
tree's `loom` is counted too, first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(ROOT / ".venv" / "bin" / "python")
MODELS = {"anthropic": "anthropic:claude-sonnet-4-6", "openai": "openai:gpt-5"}

PROBE = """
import os, socket, sys
import {sdk}
os.system(f"callgrind_control -i on {{os.getpid()}} >/dev/null")
def first_connect(self, address):
    os._exit(0)
socket.socket.connect = first_connect
sys.argv = ["loom", "run", "-p", "say hi", "--model", {model!r}]
from loom.__main__ import main
main()
"""


def count(provider: str, src: Path | None) -> int:
    """Instructions from the SDK imported to the first connect, in a fresh project."""
    with tempfile.TemporaryDirectory() as tmp:
        project, home, out = Path(tmp, "project"), Path(tmp, "home"), Path(tmp, "cg.out")
        project.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(
            LOOM_HOME=str(home),
            LOOM_ALLOW_MODEL_REQUESTS="0",
            OPENAI_API_KEY="bench",
            ANTHROPIC_API_KEY="bench",
            OPENAI_BASE_URL="http://127.0.0.1:9/v1",
            ANTHROPIC_BASE_URL="http://127.0.0.1:9",
        )
        if src is not None:
            env["PYTHONPATH"] = str(src)
        code = PROBE.format(sdk=provider, model=MODELS[provider])
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
        command += [f"--callgrind-out-file={out}", PYTHON, "-c", code]
        subprocess.run(command, cwd=project, env=env, capture_output=True, check=False)
        totals = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
        if totals is None:
            raise SystemExit(f"no totals in {out}")
        return int(totals.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--provider", choices=sorted(MODELS), default="openai")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", type=Path)
    args = parser.parse_args()
    trees: dict[str, Path | None] = {"after": None}
    if args.before is not None:
        trees["before"] = args.before / "src" if (args.before / "src").is_dir() else args.before
    counts: dict[str, list[int]] = {label: [] for label in trees}
    for src in trees.values():  # once each, unmeasured, so the bytecode is written
        count(args.provider, src)
    for _ in range(args.runs):
        for label, src in trees.items():
            counts[label].append(count(args.provider, src))
    for label, values in counts.items():
        print(
            f"{label}: {statistics.median(values) / 1e6:.1f} M instructions "
            f"(runs: {', '.join(f'{v / 1e6:.1f}' for v in values)})"
        )
    if "before" in counts:
        ratio = statistics.median(counts["after"]) / statistics.median(counts["before"])
        print(f"after/before: {ratio:.3f}")


if __name__ == "__main__":
    main()
