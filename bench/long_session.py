"""Does a turn cost the same at turn 500 as at turn 10?

A session of --turns turns through the real Session and the real provider SDKs, against
the fake LLM server (tests/fakes) running in its own process. Each turn: a user message,
a tool call answered by a ~1.5 kB tool result, then a short answer (two model requests,
four messages). The context window is made large enough that nothing is pruned, so the
request grows with every turn (at turn 500: 2,000 messages, ~1 MB). Two variants:
"saved" (a LocalThreadStore in a temporary LOOM_HOME: every turn ends with the thread
durably on disk, two fsyncs) and "unsaved" (a store that keeps nothing: the request path
alone, what the replay baseline compares with).

Figures, per provider: the median time of a whole turn (`send_message`) over a window
around turns 10, 100, 250 and 500. Baseline in the same run: the very request bodies Loom
sent in those turns, captured at the transport and replayed with plain httpx2 against
the same server (streamed, read to the end), each right after the turn it copies so
both see the same moment's load: what the wire and the server cost.

With --before DIR (a source tree, e.g. the commit before a change, unpacked with
`git archive <rev> src | tar -x -C DIR`), the same session runs on that tree too, in
the same run, and the ratios are printed side by side.

    .venv/bin/python bench/long_session.py [--turns 500] [--providers openai,anthropic]
        [--before /tmp/before]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

from _fake_proc import FakeServerProcess, run_on_tree, source_trees

PROVIDERS = ("openai", "openai-compatible", "anthropic", "google")
MODELS = {
    "openai": "openai:gpt-4.1",
    "openai-compatible": "openai-compatible:llama3.1:8b",
    "anthropic": "anthropic:claude-sonnet-4-6",
    "google": "google:gemini-2.5-pro",
}
CHECKPOINTS = (10, 100, 250, 500)
WINDOW = 5  # turns each side of a checkpoint whose median is reported
TOOL_OUTPUT = "\n".join(f"    line {i}: value = compute(alpha_{i}, beta_{i})" for i in range(36))


def turn_script(turn: int) -> list[dict]:
    answer = f"Turn {turn}: the values line up; nothing else to change in this part. " * 3
    return [
        {"tool_calls": [{"name": "lookup", "arguments": {"key": f"item-{turn}"}}]},
        {"text": answer},
    ]


# -- the measured process (runs on one source tree) ------------------------------------


async def start_session(name: str, server: str, project: Path, save: bool = False) -> Any:
    """(workspace, session) of the benches' long session: provider `name` against the
    fake server at `server`, a `lookup` tool, nothing pruned; saves on (a LocalThreadStore
    in LOOM_HOME) or off (a store that keeps nothing: the request path alone)."""
    from loom.config import load_config
    from loom.llm.registry import create_provider
    from loom.session import SessionSpec, Workspace
    from loom.store.base import ThreadStore
    from loom.store.local import LocalThreadStore
    from loom.tools.base import Risk, ToolContext, ToolResult

    class LookupTool:
        name = "lookup"
        description = "Look a key up."
        parameters = {"type": "object", "properties": {"key": {"type": "string"}}}  # noqa: RUF012
        risk: Risk = "read"

        def permission_subject(self, args: dict) -> None:
            return None

        async def run(self, args: dict, ctx: ToolContext) -> ToolResult:
            return ToolResult(f"{args.get('key')}:\n{TOOL_OUTPUT}")

    class NullStore:  # the request path alone: nothing saved
        def save(self, thread) -> None:
            pass

        def load(self, thread_id: str):
            return None

        def acquire_writer(self, thread_id: str) -> NullStore:
            return self

        def release(self) -> None:
            pass

    base = server + "/v1" if name.startswith("openai") else server
    provider = create_provider(name, api_key="bench-key", base_url=base)
    options = {
        "rules": "",
        "git_snapshot": False,
        "repo_map_tokens": 0,
        "compaction": False,
        "decision_tokens": 0,
        "max_context_tokens": 50_000_000,
        "reserved_output_tokens": 4096,
    }
    store = LocalThreadStore() if save else cast("ThreadStore", NullStore())  # partial fake
    ws = Workspace(load_config(project, project_root=project), store=store,
                   provider_factory=lambda m: provider, session_options=options)  # fmt: skip
    spec = SessionSpec(
        model=MODELS[name], extra_tools=[LookupTool()], tools=[LookupTool.name], auto_approve=True
    )
    return ws, await ws.start_session(spec)


def child(args: argparse.Namespace) -> None:
    import asyncio

    import httpx2

    measured = {t for c in CHECKPOINTS if c <= args.turns for t in window(c, args.turns)}
    captured: dict[int, list[tuple[str, dict, bytes]]] = {}
    current = {"turn": 0}
    transport_send = httpx2.AsyncHTTPTransport.handle_async_request

    async def capturing(self, request):  # the bytes Loom hands the wire, for the replay
        if current["turn"] in measured:
            body = request.content if hasattr(request, "content") else b""
            captured.setdefault(current["turn"], []).append(
                (str(request.url), dict(request.headers), body)
            )
        return await transport_send(self, request)

    httpx2.AsyncHTTPTransport.handle_async_request = capturing

    # The garbage collector's share of a turn: it walks every tracked object, so a
    # long history makes its full collections dearer (the replay holds no history).
    gc_spent, gc_started = [0.0], [0.0]

    def gc_timer(phase: str, info: dict) -> None:
        if phase == "start":
            gc_started[0] = time.perf_counter()
        else:
            gc_spent[0] += time.perf_counter() - gc_started[0]

    gc.callbacks.append(gc_timer)
    server = args.server_url

    async def run() -> dict[str, list[float] | dict[str, int]]:
        name = args.provider
        ws, session = await start_session(name, server, Path(args.project), save=args.save)
        times: list[float] = []
        cpu: list[float] = []
        gc_times: list[float] = []
        loop_cpu: list[float] = []  # the event loop's thread alone
        replay: dict[int, float] = {}
        replay_cpu: dict[int, float] = {}
        profiler = cProfile.Profile(time.thread_time) if args.profile else None  # loop's CPU
        replay_profiler = cProfile.Profile(time.thread_time) if args.profile else None
        replay_client = httpx2.AsyncClient(timeout=60)
        script_url = server + "/_fake/turns"
        for n in range(1, args.turns + 1):
            (await replay_client.post(script_url, json=turn_script(n))).raise_for_status()
            current["turn"] = n
            profiled = profiler is not None and n > args.turns - args.profile
            if profiled and profiler is not None:
                profiler.enable()
            start, start_cpu = time.perf_counter(), time.process_time()
            start_loop = time.thread_time()
            gc_spent[0] = 0.0
            await session.send_message(f"Turn {n}: please look up item-{n} and check it.")
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            loop_cpu.append(time.thread_time() - start_loop)
            gc_times.append(gc_spent[0])
            if profiled and profiler is not None:
                profiler.disable()
            current["turn"] = 0
            if n in captured:
                # The replay, right after the turn it copies (the same moment's load): the
                # same bodies, the same scripted answers, plain httpx2.
                (await replay_client.post(script_url, json=turn_script(n))).raise_for_status()
                if profiled and replay_profiler is not None:
                    replay_profiler.enable()
                start, start_cpu = time.perf_counter(), time.process_time()
                for url, headers, body in captured[n]:
                    async with replay_client.stream(
                        "POST", url, headers=headers, content=body
                    ) as response:
                        async for _ in response.aiter_raw():
                            pass
                replay[n] = time.perf_counter() - start
                replay_cpu[n] = time.process_time() - start_cpu
                if profiled and replay_profiler is not None:
                    replay_profiler.disable()
        await replay_client.aclose()
        if profiler is not None:
            profiler.dump_stats(str(Path(args.project) / "profile.out"))
            if os.environ.get("LOOM_BENCH_PROFILE_OUT"):  # kept for a closer look
                profiler.dump_stats(os.environ["LOOM_BENCH_PROFILE_OUT"])
                # the replay of the same turns, to subtract: what Loom adds to the wire's cost
                if replay_profiler is not None:
                    replay_profiler.dump_stats(os.environ["LOOM_BENCH_PROFILE_OUT"] + ".replay")
            stats = pstats.Stats(str(Path(args.project) / "profile.out"), stream=sys.stderr)
            stats.sort_stats("tottime").print_stats(25)
            stats.sort_stats("cumulative").print_stats(40)
        assert len(session.get_history()) == 4 * args.turns, len(session.get_history())
        await ws.shutdown()
        every = range(1, args.turns + 1)
        return {
            "times": times,
            "replay": [replay.get(n, 0.0) for n in every],
            "cpu": cpu,
            "replay_cpu": [replay_cpu.get(n, 0.0) for n in every],
            "gc": gc_times,
            "loop_cpu": loop_cpu,
            "body_bytes": {str(n): sum(len(b) for *_, b in captured[n]) for n in captured},
        }

    print(json.dumps(asyncio.run(run())))


def window(checkpoint: int, turns: int) -> range:
    return range(max(1, checkpoint - WINDOW), min(turns, checkpoint + WINDOW) + 1)


# -- the driver --------------------------------------------------------------------------


def measure(
    src: Path, provider: str, turns: int, server: str, save: bool, profile: int = 0
) -> dict:
    with tempfile.TemporaryDirectory() as home:
        project = Path(home) / "project"
        project.mkdir()
        args = [
            "--provider",
            provider,
            "--turns",
            str(turns),
            "--server-url",
            server,
            "--project",
            str(project),
            *(["--save"] if save else []),
            *(["--profile", str(profile)] if profile else []),
        ]
        return run_on_tree(src, __file__, args, home, show_stderr=bool(profile))


def at(values: list[float], checkpoint: int) -> float:
    turns = len(values)
    picked = [values[t - 1] for t in window(checkpoint, turns) if values[t - 1] > 0]
    return statistics.median(picked) * 1000


def report(label: str, result: dict, turns: int) -> dict[int, float]:
    checkpoints = [c for c in CHECKPOINTS if c <= turns]
    loom = {c: at(result["times"], c) for c in checkpoints}
    replay = {c: at(result["replay"], c) for c in checkpoints}
    size = {c: result["body_bytes"].get(str(c), 0) / 1e3 for c in checkpoints}
    first = checkpoints[0]
    print(f"  {label}")
    print("    turn         " + "".join(f"{c:>10}" for c in checkpoints))
    print("    body kB      " + "".join(f"{size[c]:>10.0f}" for c in checkpoints))
    print("    loom ms      " + "".join(f"{loom[c]:>10.1f}" for c in checkpoints))
    print("    replay ms    " + "".join(f"{replay[c]:>10.1f}" for c in checkpoints))
    print("    x replay     " + "".join(f"{loom[c] / replay[c]:>10.2f}" for c in checkpoints))
    print("    x turn 10    " + "".join(f"{loom[c] / loom[first]:>10.2f}" for c in checkpoints))
    if "cpu" in result:  # CPU time of the measured process: what load from others hides
        cpu = {c: at(result["cpu"], c) for c in checkpoints}
        rcpu = {c: at(result["replay_cpu"], c) for c in checkpoints}
        print("    loom cpu ms  " + "".join(f"{cpu[c]:>10.1f}" for c in checkpoints))
        print("    replay cpu ms" + "".join(f"{rcpu[c]:>10.1f}" for c in checkpoints))
        print("    cpu x replay " + "".join(f"{cpu[c] / rcpu[c]:>10.2f}" for c in checkpoints))
        print("    cpu x turn 10" + "".join(f"{cpu[c] / cpu[first]:>10.2f}" for c in checkpoints))
    if "loop_cpu" in result:
        lcpu = {c: at(result["loop_cpu"], c) for c in checkpoints}
        print("    loop cpu ms  " + "".join(f"{lcpu[c]:>10.1f}" for c in checkpoints))
    if "gc" in result:
        gc_ms = {c: statistics.mean(result["gc"][t - 1] for t in window(c, turns)) * 1000
                 for c in checkpoints}  # fmt: skip
        print("    loom gc ms   " + "".join(f"{gc_ms[c]:>10.2f}" for c in checkpoints))
    return loom


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--providers", default=",".join(PROVIDERS))
    parser.add_argument("--before", type=Path, help="a source tree to measure in the same run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--provider", help=argparse.SUPPRESS)
    parser.add_argument("--server-url", help=argparse.SUPPRESS)
    parser.add_argument("--project", help=argparse.SUPPRESS)
    parser.add_argument("--save", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="cProfile the last N turns (printed to stderr)",
    )
    parser.add_argument(
        "--variants",
        default="saved,unsaved",
        help="saved: thread saves on (fsync'd, as in use); unsaved: the request path alone",
    )
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    trees = source_trees(args.before)
    with FakeServerProcess() as server:
        print(
            f"long session: {args.turns} turns (4 messages each), load "
            f"{os.getloadavg()[0]:.2f} at start; medians over turns +-{WINDOW}"
        )
        for provider in args.providers.split(","):
            print(f"{provider}:")
            for variant in args.variants.split(","):
                results = {}
                for label, src in trees:
                    started = time.perf_counter()
                    result = measure(
                        src, provider, args.turns, server, variant == "saved", args.profile
                    )
                    took = time.perf_counter() - started
                    results[label] = report(
                        f"{label}, {variant} ({took:.0f} s, load {os.getloadavg()[0]:.2f})",
                        result,
                        args.turns,
                    )
                if len(results) == 2:
                    checkpoints = sorted(results["after"])
                    print(
                        "    before/after"
                        + "".join(
                            f"{results['before'][c] / results['after'][c]:>9.1f}x"
                            for c in checkpoints
                        )
                    )


if __name__ == "__main__":
    main()
