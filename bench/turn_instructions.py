"""How many instructions does Loom run per turn, against a replay of the same bodies?

Wall and CPU time on a shared 2-core machine move by ±20% with the load; instruction
counts do not. The session of `long_session.py` (each turn a user message, a tool call,
its ~1.5 kB result, a short answer; the real SDKs against the fake server in its own
process) runs under valgrind's callgrind with counting switched on only for turns
FIRST..LAST-1 (`callgrind_control -i on/off`); a second process counts the replay of the
very request bodies of those turns with plain httpx2. Kernel time is not in the counts
(the wire's copies, a woken thread), so this is the Python-side work.

    .venv/bin/python bench/turn_instructions.py [--providers openai,google]
        [--before /tmp/before] [--first 8 --last 20] [--keep DIR]

--keep DIR copies each run's callgrind output there (`callgrind_annotate` reads it: which
C functions, memcpy or the tuple copies, the instructions went to).

Each (tree, provider) costs two valgrind runs of ~1-2 minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _fake_proc import ROOT, FakeServerProcess, post_turns, source_trees
from long_session import PROVIDERS, start_session, turn_script


def _count(on: bool) -> None:
    """Switch callgrind's counting for this process (a no-op outside valgrind)."""
    # os.system: the fewest instructions of our own around the switch (they are counted)
    os.system(f"callgrind_control -i {'on' if on else 'off'} {os.getpid()} >/dev/null 2>&1")


async def child(provider_name: str, server: str, first: int, last: int, replay: bool) -> None:
    import httpx2

    captured: list[tuple[str, dict, bytes]] = []
    current = {"turn": 0}
    send = httpx2.AsyncHTTPTransport.handle_async_request

    async def capturing(self, request):
        if first <= current["turn"] < last:
            captured.append((str(request.url), dict(request.headers), request.content))
        return await send(self, request)

    httpx2.AsyncHTTPTransport.handle_async_request = capturing
    ws, session = await start_session(provider_name, server, Path(tempfile.mkdtemp()))
    for n in range(1, last):
        current["turn"] = n
        if n == first and not replay:
            _count(True)
        await session.send_message(f"Turn {n}: please look up item-{n} and check it.")
    _count(False)
    current["turn"] = 0  # the replay's own requests are not captured again
    await ws.shutdown()
    if replay:
        post_turns(server, [t for n in range(first, last) for t in turn_script(n)])
        async with httpx2.AsyncClient(timeout=60) as client:
            _count(True)
            for url, headers, body in captured:
                async with client.stream("POST", url, headers=headers, content=body) as r:
                    async for _ in r.aiter_raw():
                        pass
            _count(False)


def measure(
    src: Path,
    provider: str,
    server: str,
    first: int,
    last: int,
    replay: bool,
    keep: Path | None = None,
) -> float:
    """Instructions per turn over turns first..last-1."""
    post_turns(server, [t for n in range(1, last) for t in turn_script(n)])
    with tempfile.TemporaryDirectory() as home:
        out = Path(home) / "callgrind.out"
        env = {
            **os.environ,
            "LOOM_HOME": home,
            "LOOM_ALLOW_MODEL_REQUESTS": "0",
            "PYTHONPATH": f"{src}{os.pathsep}{ROOT}{os.pathsep}{ROOT / 'bench'}",
        }
        command = [sys.executable, __file__, "--child", provider, server, str(first), str(last)]
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no",
             f"--callgrind-out-file={out}", *command, *(["--replay"] if replay else [])],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"the measured process failed:\n{done.stderr[-3000:]}")
        total = 0
        for dump in Path(home).glob("callgrind.out*"):
            found = re.search(r"^totals: (\d+)", dump.read_text(errors="replace"), re.M)
            total += int(found.group(1)) if found else 0
            if keep is not None:  # a file name prefix
                keep.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(dump, f"{keep}.{dump.name}")
    return total / (last - first)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--providers", default=",".join(PROVIDERS))
    parser.add_argument("--before", type=Path, help="a source tree to count alongside")
    parser.add_argument("--first", type=int, default=8)
    parser.add_argument("--last", type=int, default=20)
    parser.add_argument("--keep", type=Path, help="a folder for the callgrind outputs")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--replay", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        name, server, first, last = args.child
        asyncio.run(child(name, server, int(first), int(last), args.replay))
        return
    trees = source_trees(args.before)
    rows = {}
    with FakeServerProcess() as server:
        for provider in args.providers.split(","):
            span = args.first, args.last
            kept = (
                {
                    label: args.keep / f"{provider}.{label}.turns-{args.first}-{args.last - 1}"
                    for label in ("replay", *(label for label, _ in trees))
                }
                if args.keep
                else {}
            )
            replay = measure(trees[-1][1], provider, server, *span, True, kept.get("replay"))
            row = {"replay": replay}
            for label, src in trees:
                row[label] = measure(src, provider, server, *span, False, kept.get(label))
            rows[provider] = row
            text = "  ".join(
                f"{label} {row[label] / 1e6:.2f}M ({row[label] / replay:.2f}x replay)"
                for label, _ in trees
            )
            print(f"{provider}: instructions per turn, turns {args.first}-{args.last - 1}: "
                  f"{text}; replay {replay / 1e6:.2f}M", flush=True)  # fmt: skip
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
