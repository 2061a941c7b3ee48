"""`loom web` as a subprocess against the fake LLM server, and what its tests do in a page.

Chromium comes from apt (scripts/setup installs it); Playwright never downloads one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes.llm_server import FakeLlmServer
from tests.support.loom_cli import provider_env

CHROMIUM = os.environ.get("LOOM_CHROMIUM", "/usr/bin/chromium")  # Debian's; never a download
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
READY = re.compile(r"Loom is ready at (http://\S+)")


@dataclass
class WebServer:
    url: str  # with ?token=
    base: str
    token: str
    port: int
    process: subprocess.Popen[str]
    project: Path
    home: Path
    output: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None  # fills `output`; ends with the process's output

    def threads(self) -> list[Path]:
        return sorted((self.home / "data" / "threads").glob("T-*.json"))


def start_web(
    project: Path, server: FakeLlmServer, home: Path, *extra: str, browser: str | None = None
) -> WebServer:
    """`loom web --no-open --port 0 EXTRA` in `project`; returns once it says it is ready.
    `browser`: open one instead of `--no-open` (the `BROWSER` command, `%s` the page)."""
    env = {**os.environ, **provider_env(server), "LOOM_HOME": str(home)}
    opening = ["--no-open"]
    if browser is not None:
        env["BROWSER"], opening = browser, []
    process = subprocess.Popen(
        [sys.executable, "-m", "loom", "web", *opening, "--port", "0", *extra],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            match = READY.search(line)
            if match:
                found.append(match.group(1))
                ready.set()
        ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if not ready.wait(60) or not found:
        process.kill()
        raise AssertionError("loom web did not start:\n" + "".join(output))
    url = found[0]
    port = int(re.search(r":(\d+)/", url).group(1))  # type: ignore[union-attr]
    token = url.split("token=", 1)[1]
    base = f"http://127.0.0.1:{port}"
    return WebServer(url, base, token, port, process, project, home, output, reader)


def stop_web(running: WebServer) -> None:
    """Terminate `loom web` (killed when it has not ended within 15 s)."""
    running.process.terminate()
    try:
        running.process.wait(15)
    except subprocess.TimeoutExpired:
        running.process.kill()


def loom_run(project: Path, server: FakeLlmServer, prompt: str) -> str:
    """`loom run -p PROMPT` as a subprocess (sync Playwright may hold this process's event
    loop, so not in process); returns the new thread's id."""
    done = subprocess.run(
        [sys.executable, "-m", "loom", "run", "-p", prompt, "-o", "json"],
        cwd=project,
        env={**os.environ, **provider_env(server)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)["thread_id"]


def authed(web: WebServer, **headers: str) -> Any:
    """An httpx client of `loom web` that carries its token cookie (and `headers`)."""
    import httpx

    jar = {f"loom_token_{web.port}": web.token}
    return httpx.Client(base_url=web.base, headers=headers, cookies=jar, timeout=20)


def wait_for(condition: Callable[[], Any], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def send(page: Any, text: str) -> None:
    """Type a message into the chat box and press Enter."""
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")
