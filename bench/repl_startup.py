"""How long from typing `loom` to an editable prompt, per provider?

Starts the fake LLM server (tests/fakes/llm_server.py) in this process, then launches the
REPL (`python -m loom --model PROVIDER:MODEL`) in a pseudo-terminal N times per provider
and takes, for each launch, the time from just before the process is spawned to the
moment the prompt (`›`) is drawn. Then one key is typed and must be echoed (the prompt
really is editable), Ctrl-D leaves. Baseline, in the same run: a pty-spawned
`python -c pass` until it exits. Also reported: when the session was ready (the bottom
toolbar names the thread), which happens in the background while the person types.

    .venv/bin/python bench/repl_startup.py [--runs 10] [--provider anthropic,openai]

Target (issue 14): at most 0.4 s to the editable prompt.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.llm_server import FakeLlmServer  # noqa: E402

PYTHON = sys.executable
MODELS = {"anthropic": "anthropic:claude-sonnet-4-6", "openai": "openai:gpt-5"}
PROMPT = re.compile("›")
READY = re.compile(r"T-[0-9a-f]{8}")  # the toolbar (or the old header) names the thread


def environment(server: FakeLlmServer, home: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}",
        "LOOM_HOME": home,
        "LOOM_ALLOW_MODEL_REQUESTS": "0",
        "ANTHROPIC_API_KEY": "bench",
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        "OPENAI_API_KEY": "bench",
        "OPENAI_BASE_URL": server.openai_base_url,
        "PROMPT_TOOLKIT_NO_CPR": "1",
        "TERM": "xterm",
        "NO_COLOR": "1",
    }


def one_launch(model: str, env: dict[str, str], project: Path) -> tuple[float, float]:
    """(seconds to an editable prompt, seconds until the session was ready)."""
    started = time.perf_counter()
    child = pexpect.spawn(
        PYTHON, ["-m", "loom", "--model", model], cwd=str(project), env=env,
        encoding="utf-8", timeout=60, dimensions=(40, 160),
    )  # fmt: skip
    child.expect(PROMPT)
    prompt_at = time.perf_counter() - started
    assert isinstance(child.before, str)  # encoding="utf-8": text
    ready_first = READY.search(child.before)  # a REPL that opens the session first
    child.send("x")
    child.expect("x")  # echoed: the line can be edited
    if not ready_first:
        child.expect(READY)
    ready_at = prompt_at if ready_first else time.perf_counter() - started
    child.send("\x7f")  # leave the line empty, then Ctrl-D
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    return prompt_at, ready_at


def baseline(env: dict[str, str]) -> float:
    started = time.perf_counter()
    child = pexpect.spawn(PYTHON, ["-c", "pass"], env=env, encoding="utf-8")
    child.expect(pexpect.EOF)
    child.close()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--provider", default="anthropic,openai")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeLlmServer() as server:
        project = Path(tmp) / "proj"
        project.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        (project / "app.py").write_text("def main():\n    return 1\n")
        env = environment(server, str(Path(tmp) / "home"))
        one_launch(MODELS["openai"], env, project)  # warm the disk cache and loom.db
        rows: list[tuple[str, list[float], list[float]]] = []
        passes: list[float] = []
        for provider in args.provider.split(","):
            prompts, readies = [], []
            for _ in range(args.runs):
                passes.append(baseline(env))
                prompt_at, ready_at = one_launch(MODELS[provider], env, project)
                prompts.append(prompt_at)
                readies.append(ready_at)
            rows.append((provider, prompts, readies))
    base = statistics.median(passes)
    print(f"python -c pass (pty): median {base:.3f} s over {len(passes)} runs")
    for provider, prompts, readies in rows:
        prompt, ready = statistics.median(prompts), statistics.median(readies)
        print(
            f"{provider:10s} editable prompt: median {prompt:.3f} s ({prompt / base:.1f}x pass), "
            f"min {min(prompts):.3f}, max {max(prompts):.3f}; session ready: median {ready:.3f} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
