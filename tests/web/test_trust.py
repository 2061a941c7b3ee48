"""The project's trust question in `loom web`: a banner spelling out what the project's
files set; until it is answered nothing of it applies, after "Trust this project" new
sessions get it, and the answer is remembered (no banner on the next page)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.web import WebServer, send, start_web, stop_web, wait_for


@pytest.fixture
def untrusted(project: Path, server: FakeLlmServer, loom_home: Path) -> Iterator[WebServer]:
    (project / ".loom.toml").write_text('[permissions]\nauto_approve = ["shell"]\n')
    running = start_web(project, server, loom_home)
    yield running
    stop_web(running)


def test_the_trust_banner_asks_once_and_trusting_applies_to_new_sessions(
    browser: Any, untrusted: WebServer, server: FakeLlmServer, shots: Path
) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(untrusted.url)
    banner = page.get_by_role("region", name="Trust this project")
    expect(banner).to_contain_text("permissions.auto_approve: these tools run without asking")
    page.screenshot(path=str(shots / "31-trust-banner.png"))

    touch = FakeToolCall("shell", {"command": "touch RAN"})
    server.add(Turn(tool_calls=[touch]), Turn(text="asked first"))
    send(page, "untrusted run")  # the project's auto_approve is ignored: a question
    page.get_by_role("button", name="Deny").click()
    expect(page.locator(".msg-assistant").last).to_contain_text("asked first")
    assert not (untrusted.project / "RAN").exists()

    page.goto(untrusted.base + "/")
    banner = page.get_by_role("region", name="Trust this project")
    banner.get_by_role("button", name="Trust this project").click()
    expect(banner).to_have_count(0)
    server.add(Turn(tool_calls=[touch]), Turn(text="ran it"))
    send(page, "trusted run")
    expect(page.locator(".msg-assistant").last).to_contain_text("ran it")
    wait_for(lambda: (untrusted.project / "RAN").exists())
    page.goto(untrusted.base + "/")  # answered: remembered, no banner
    expect(page.get_by_role("region", name="Trust this project")).to_have_count(0)
    context.close()


def test_a_declined_project_s_sessions_name_what_they_ignore(
    browser: Any, untrusted: WebServer, server: FakeLlmServer, shots: Path
) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(untrusted.url)
    banner = page.get_by_role("region", name="Trust this project")
    banner.get_by_role("button", name="Don't trust").click()
    expect(banner).to_have_count(0)
    server.add(Turn(text="hello"))
    send(page, "hi")
    expect(page.locator(".msg-assistant").last).to_contain_text("hello")
    said = page.locator(".notice-warn", has_text="ignored permissions.auto_approve")
    expect(said).to_have_count(1)  # once, in the session's header notices
    expect(said).to_contain_text("you chose not to trust it")
    page.screenshot(path=str(shots / "32-trust-declined.png"))
    context.close()
