"""Bench helpers: the fake LLM server in its own process, and running a bench's measured
part on a given source tree (so "before" and "after" run side by side in one run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Records nothing: a long bench would otherwise keep every request body in memory.
_SERVER = """
import sys
sys.path.insert(0, {root!r})
import socketserver
socketserver.TCPServer.request_queue_size = 256  # many streams connect at once
import tests.fakes.llm_server as fake
fake._State.record = lambda self, request: None
server = fake.FakeLlmServer()
print("LISTENING", server.base_url, flush=True)
server.serve_forever()
"""


class FakeServerProcess:
    """`with FakeServerProcess() as url:` the fake server, fed over /_fake/turns."""

    def __enter__(self) -> str:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER.format(root=str(ROOT))],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line.startswith("LISTENING"):
            self.proc.kill()
            raise SystemExit(f"the fake server did not start: {line!r}")
        return line.split()[1]

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def post_turns(server: str, turns: list[dict]) -> None:
    """Queue scripted turns (the fake server's JSON turn format)."""
    import httpx2

    for i in range(0, len(turns), 200):
        httpx2.post(server + "/_fake/turns", json=turns[i : i + 200]).raise_for_status()


def source_trees(before: Path | None) -> list[tuple[str, Path]]:
    """[("before", its src), ("after", this checkout's src)]; "before" only if given."""
    trees = [("after", ROOT / "src")]
    if before is not None:
        src = before / "src" if (before / "src").is_dir() else before
        trees.insert(0, ("before", src))
    return trees


def run_on_tree(
    src: Path, script: str, args: list[str], home: str, show_stderr: bool = False
) -> dict:
    """Run `script --child *args` with `src` first on the path, in LOOM_HOME=`home`;
    returns the JSON object it prints last (and passes its stderr on if `show_stderr`)."""
    env = {
        **os.environ,
        "LOOM_HOME": home,
        "LOOM_ALLOW_MODEL_REQUESTS": "0",
        "PYTHONPATH": f"{src}{os.pathsep}{ROOT}",
    }
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        env.pop(var, None)
    out = subprocess.run(
        [sys.executable, script, "--child", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"{Path(script).name} {args} on {src} failed:\n{out.stderr[-3000:]}")
    if show_stderr:
        print(out.stderr, file=sys.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])
