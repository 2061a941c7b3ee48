"""`loom web` as a subprocess against the fake LLM server, driven by Debian's Chromium.

Chromium comes from apt (scripts/setup installs it); Playwright never downloads one.
Without it these tests skip on a developer's machine and FAIL under CI=true.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.llm_server import FakeLlmServer

CHROMIUM = os.environ.get("LOOM_CHROMIUM", "/usr/bin/chromium")  # Debian's; never a download
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]
READY = re.compile(r"Loom is ready at (http://\S+)")


def _missing(what: str) -> None:
    message = f"{what}; run scripts/setup (it installs chromium and playwright)"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")  # sync Playwright runs an event loop while it is open:
def browser() -> Iterator[Any]:  # closed after each module, async tests run after it
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        _missing("the playwright Python package is not installed")
    # The first session imports a provider SDK; on a busy 2-core machine that takes seconds.
    expect.set_options(timeout=40_000)
    if not Path(CHROMIUM).exists():
        _missing(f"{CHROMIUM} is missing")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Screenshots of each main view, under this test run's output folder
    (LOOM_TEST_OUTPUT overrides it: pytest prunes old temp folders)."""
    base = os.environ.get("LOOM_TEST_OUTPUT")
    folder = (Path(base) if base else tmp_path_factory.getbasetemp()) / "web-screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def server() -> Iterator[FakeLlmServer]:
    with FakeLlmServer() as fake:
        yield fake


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=Loom Test", "-c", "user.email=test@loom.invalid", *args],
        cwd=root, check=True, capture_output=True, text=True,
    ).stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q")
    (root / "hello.py").write_text("def greet():\n    print('Hello')\n")
    (root / "README.md").write_text("# demo\n")
    (root / "src").mkdir()
    (root / "src" / "util.py").write_text("X = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    return root


def provider_env(server: FakeLlmServer) -> dict[str, str]:
    return {
        "ANTHROPIC_API_KEY": "sk-test-secret-key", "OPENAI_API_KEY": "sk-test-secret-key",
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        "OPENAI_BASE_URL": server.openai_base_url,
    }


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

    def threads(self) -> list[Path]:
        return sorted((self.home / "data" / "threads").glob("T-*.json"))


def start_web(project: Path, server: FakeLlmServer, home: Path, *extra: str) -> WebServer:
    env = {**os.environ, **provider_env(server), "LOOM_HOME": str(home)}
    process = subprocess.Popen(
        [sys.executable, "-m", "loom", "web", "--no-open", "--port", "0", *extra],
        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
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

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(60) or not found:
        process.kill()
        raise AssertionError("loom web did not start:\n" + "".join(output))
    url = found[0]
    port = int(re.search(r":(\d+)/", url).group(1))  # type: ignore[union-attr]
    token = url.split("token=", 1)[1]
    return WebServer(url, f"http://127.0.0.1:{port}", token, port, process, project, home,
                     output)


def stop_web(running: WebServer) -> None:
    running.process.terminate()
    try:
        running.process.wait(15)
    except subprocess.TimeoutExpired:
        running.process.kill()


@pytest.fixture
def web(project: Path, server: FakeLlmServer, loom_home: Path) -> Iterator[WebServer]:
    running = start_web(project, server, loom_home)
    yield running
    stop_web(running)


@pytest.fixture
def page(browser: Any, web: WebServer) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(40_000)
    tab.goto(web.url)
    yield tab
    context.close()
