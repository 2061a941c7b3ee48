"""How long from launching `loom run` to its first request reaching the model server?

Starts the fake LLM server (tests/fakes/llm_server.py) in this process, then launches
`loom run -p ...` N times against it (provider from --provider, default anthropic) and
takes, for each run, the time from just before the process is spawned to the moment the
server records the request line. Baseline, measured in the same run: spawning
`python -c pass` and waiting for it to exit. Prints medians and the ratio.

Loom's own share is the spawn-to-first-request time less `python -c 'import <sdk>'` (and
less the same import with the garbage collector paused, as `loom run` imports it). On
a shared machine wall times follow the load, so the CPU time (user + system) of each
child process is printed too: the whole `loom run` (start-up, one short answer, exit)
against `import <sdk>` alone; their difference is Loom's own CPU share.

    .venv/bin/python bench/run_startup.py [--runs 15] [--provider NAME] [--before DIR]

With --before DIR (a `git archive <rev> src` extracted there) `loom run` from that source
tree is measured too, interleaved with this checkout's, so both see the same load.

Target (issue 3): at most 0.5 s to the first request.
"""

from __future__ import annotations

import argparse
import os
import resource
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
MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-6",
    "openai": "openai:gpt-5",
    "openai-compatible": "openai-compatible:llama3.1",
}


def provider_env(
    provider: str, server: FakeLlmServer, home: str, src: Path | None = None
) -> dict[str, str]:
    env = {**BYTECODE_ENV, "LOOM_HOME": home, "LOOM_ALLOW_MODEL_REQUESTS": "0"}
    if src is not None:  # another source tree first on the path (the "before" tree)
        env["PYTHONPATH"] = str(src)
    env.update(
        {
            "ANTHROPIC_API_KEY": "bench",
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "OPENAI_API_KEY": "bench",
            "OPENAI_BASE_URL": server.openai_base_url,
            "OPENAI_COMPATIBLE_BASE_URL": server.openai_base_url,
        }
    )
    return env


def child_cpu() -> float:
    """User + system CPU seconds of the children waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_to_first_request(
    provider: str, server: FakeLlmServer, project: Path, home: str, src: Path | None = None
) -> tuple[float, float]:
    """(spawn -> first request, CPU seconds of the whole run)."""
    before = len(server.requests)
    cpu = child_cpu()
    started = time.time()
    process = subprocess.run(
        [PYTHON, "-m", "loom", "run", "-p", "say hi", "--model", MODELS[provider]],
        cwd=project,
        env=provider_env(provider, server, home, src),
        capture_output=True,
        text=True,
        check=False,
    )
    if process.returncode != 0 or len(server.requests) <= before:
        raise SystemExit(f"loom run failed ({process.returncode}): {process.stderr.strip()}")
    return server.requests[before].at - started, child_cpu() - cpu


# As installed: bytecode cached. With PYTHONDONTWRITEBYTECODE set (this machine's default)
# and a venv installed without compiling, every run would compile the SDK and Loom again.
BYTECODE_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

SDK_MODULE = {"anthropic": "anthropic", "openai": "openai", "openai-compatible": "openai"}


# Loom's own CPU to the first request, the SDK imported before the clock starts: the
# console entry point in a process that has imported the SDK, stopped at the first
# connection to the model server. Start-up is CPU-bound (one thread runs at a time), so
# this is Loom's share with nothing of the SDK's import in it. (Both probes: the SDK
# imported, then the clock runs until the first connection.)
_UNTIL_FIRST_CONNECT = """
import os, socket, sys, time
import {sdk}
start = time.process_time()
def first_connect(self, address):
    sys.stdout.write(repr(time.process_time() - start))
    sys.stdout.flush()
    os._exit(0)
socket.socket.connect = first_connect
"""

OWN_CPU_PROBE = (
    _UNTIL_FIRST_CONNECT
    + """
sys.argv = ["loom", "run", "-p", "say hi", "--model", {model!r}]
from loom.__main__ import main
main()
"""
)


# The same clock for the SDK alone: a plain program that imports the SDK, then makes its
# client and sends one request, stopped at the first connection. The SDK loads its HTTP
# transport and builds its TLS context only then, so the strict probe above counts that
# work as Loom's; this is the floor any SDK user pays from import to the first request.
SDK_FIRST_REQUEST = (
    _UNTIL_FIRST_CONNECT
    + """
import asyncio
async def ask():
    {call}
asyncio.run(ask())
"""
)
SDK_CALL = {
    "openai": "await openai.AsyncOpenAI().chat.completions.create(model='gpt-5', "
    "messages=[{'role': 'user', 'content': 'say hi'}], stream=True)",
    "anthropic": "await anthropic.AsyncAnthropic().messages.create(model='claude-sonnet-4-6', "
    "max_tokens=64, messages=[{'role': 'user', 'content': 'say hi'}], stream=True)",
}
SDK_CALL["openai-compatible"] = SDK_CALL["openai"]


def _probe(code: str, project: Path, env: dict[str, str], what: str) -> float:
    """Run a probe program; the CPU seconds it printed."""
    done = subprocess.run(
        [PYTHON, "-c", code], cwd=project, env=env, capture_output=True, text=True, check=False
    )
    try:
        return float(done.stdout.strip())
    except ValueError:
        raise SystemExit(f"the {what} probe failed: {done.stderr.strip()}") from None


def sdk_first_request_cpu(provider: str, server: FakeLlmServer, project: Path, home: str) -> float:
    code = SDK_FIRST_REQUEST.format(sdk=SDK_MODULE[provider], call=SDK_CALL[provider])
    return _probe(code, project, provider_env(provider, server, home), "SDK-alone")


def own_cpu(
    provider: str, server: FakeLlmServer, project: Path, home: str, src: Path | None = None
) -> float:
    code = OWN_CPU_PROBE.format(sdk=SDK_MODULE[provider], model=MODELS[provider])
    return _probe(code, project, provider_env(provider, server, home, src), "own-CPU")


def time_python(code: str) -> tuple[float, float]:
    """(spawn-to-exit time, CPU seconds) of `python -c code`."""
    cpu = child_cpu()
    started = time.time()
    subprocess.run([PYTHON, "-c", code], check=True, env=BYTECODE_ENV)
    return time.time() - started, child_cpu() - cpu


def report(label: str, provider: str, times: list[float], cpus: list[float]) -> None:
    median = statistics.median(times)
    print(
        f"{label}: loom run -> first request ({provider}), median of {len(times)}: "
        f"{median * 1000:.0f} ms (min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}); "
        f"CPU of the whole run, median {statistics.median(cpus) * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--provider", choices=sorted(MODELS), default="anthropic")
    parser.add_argument(
        "--before", type=Path, help="another tree's src (or its parent), measured alongside"
    )
    args = parser.parse_args()
    before_src = None
    if args.before is not None:
        before_src = args.before / "src" if (args.before / "src").is_dir() else args.before

    with tempfile.TemporaryDirectory() as tmp, FakeLlmServer([], default=Turn(text="hi")) as server:
        project = Path(tmp) / "project"
        project.mkdir()
        home = str(Path(tmp) / "home")
        time_to_first_request(args.provider, server, project, home)  # warm the disk cache
        if before_src is not None:
            time_to_first_request(args.provider, server, project, home, before_src)
        sdk = SDK_MODULE[args.provider]
        time_python(f"import {sdk}")  # and its bytecode
        own, old_own, sdk_first = [], [], []
        loom, baseline, sdk_import, old, paused = [], [], [], [], []
        loom_cpu, baseline_cpu, sdk_cpu, old_cpu, paused_cpu = [], [], [], [], []
        load = os.getloadavg()[0]
        for _ in range(args.runs):  # interleaved, so load from other work hits all alike
            measured = [
                (loom, loom_cpu, time_to_first_request(args.provider, server, project, home)),
                (baseline, baseline_cpu, time_python("pass")),
                (sdk_import, sdk_cpu, time_python(f"import {sdk}")),
                (paused, paused_cpu, time_python(f"import gc; gc.disable(); import {sdk}")),
            ]
            own.append(own_cpu(args.provider, server, project, home))
            sdk_first.append(sdk_first_request_cpu(args.provider, server, project, home))
            if before_src is not None:
                run = time_to_first_request(args.provider, server, project, home, before_src)
                measured.append((old, old_cpu, run))
                old_own.append(own_cpu(args.provider, server, project, home, before_src))
            for times, cpus, (took, cpu) in measured:
                times.append(took)
                cpus.append(cpu)

    loom_median = statistics.median(loom)
    base_median = statistics.median(baseline)
    sdk_median = statistics.median(sdk_import)
    print(f"load average {load:.2f} at start, {os.getloadavg()[0]:.2f} at the end")
    report("after", args.provider, loom, loom_cpu)
    print(f"baseline python -c pass (spawn to exit), median: {base_median * 1000:.0f} ms")
    print(
        f"python -c 'import {sdk}' (the SDK alone, spawn to exit), median: "
        f"{sdk_median * 1000:.0f} ms (min {min(sdk_import) * 1000:.0f}); "
        f"loom's own share: {(loom_median - sdk_median) * 1000:.0f} ms"
    )
    print(
        f"ratio: {loom_median / base_median:.1f}x; target <= 500 ms: "
        f"{'met' if loom_median <= 0.5 else 'NOT met'}"
    )
    whole, alone, bare = (statistics.median(c) * 1000 for c in (loom_cpu, sdk_cpu, baseline_cpu))
    print(
        f"CPU time, medians: whole loom run {whole:.0f} ms, import {sdk} {alone:.0f} ms, "
        f"python -c pass {bare:.0f} ms; loom's own CPU share {whole - alone:.0f} ms "
        f"(goal <= 150 ms)"
    )
    # `loom run` pauses the garbage collector while it starts (loom.startup_gc), which
    # makes the SDK's own import cheaper too: against that import, Loom's share is its own
    paused_median, paused_whole = statistics.median(paused), statistics.median(paused_cpu) * 1000
    print(
        f"python -c 'import gc; gc.disable(); import {sdk}' (the SDK as loom run imports "
        f"it), median: {paused_median * 1000:.0f} ms wall, {paused_whole:.0f} ms CPU; "
        f"loom's own share against it: {(loom_median - paused_median) * 1000:.0f} ms wall, "
        f"{whole - paused_whole:.0f} ms CPU"
    )
    print(
        f"loom's own CPU to the first request, {sdk} imported before the clock starts, "
        f"median: {statistics.median(own) * 1000:.0f} ms (goal <= 150 ms)"
    )
    sdk_first_median = statistics.median(sdk_first) * 1000
    print(
        f"the SDK alone from the same point (client made, one request, to the first "
        f"connection), median: {sdk_first_median:.0f} ms; loom's own CPU beyond it: "
        f"{statistics.median(own) * 1000 - sdk_first_median:.0f} ms (goal <= 150 ms)"
    )
    if old:
        old_own_median = statistics.median(old_own) * 1000
        ratio = statistics.median(own) * 1000 / old_own_median
        print(
            f"before: loom's own CPU to the first request, {sdk} imported first, median: "
            f"{old_own_median:.0f} ms; after/before {ratio:.2f}x"
        )
        old_median, old_whole = statistics.median(old), statistics.median(old_cpu) * 1000
        report("before", args.provider, old, old_cpu)
        print(
            f"before: loom's own share {(old_median - sdk_median) * 1000:.0f} ms wall, "
            f"{old_whole - alone:.0f} ms CPU; after/before, own share: "
            f"wall {(loom_median - sdk_median) / (old_median - sdk_median):.2f}x, "
            f"CPU {(whole - alone) / (old_whole - alone):.2f}x"
        )


if __name__ == "__main__":
    main()
