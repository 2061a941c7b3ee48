"""`loom web` as a subprocess against the fake LLM server, driven by Debian's Chromium.

Chromium comes from apt (scripts/setup installs it); Playwright never downloads one.
Without it these tests skip on a developer's machine and FAIL under CI=true.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.fakes.llm_server import FakeLlmServer
from tests.support.git import init_repo
from tests.support.web import CHROMIUM, CHROMIUM_ARGS, WebServer, start_web, stop_web


def _missing(what: str) -> NoReturn:
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
def project(tmp_path: Path) -> Path:
    return init_repo(
        tmp_path / "proj",
        {
            "hello.py": "def greet():\n    print('Hello')\n",
            "README.md": "# demo\n",
            "src/util.py": "X = 1\n",
        },
        commit="start",
    )


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
