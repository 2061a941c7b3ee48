"""The web page's background commands panel (fed by background_command events; Kill ends
one) and its Context tab (where the window goes), against `loom web` and the fake LLM."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.processes import alive
from tests.support.web import authed, send, start_web, stop_web


def _gone(marker: str) -> bool:
    deadline = time.monotonic() + 20
    while alive(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive(marker) == []


def test_panel_lists_kills_and_the_context_tab_breaks_down_the_window(
    browser: Any, project: Path, server: FakeLlmServer, loom_home: Path, shots: Path
) -> None:
    (project / "AGENTS.md").write_text("Keep functions short.\n")
    start = FakeToolCall("shell", {"command": "sleep 31351", "background": True})
    quick = FakeToolCall("shell", {"command": "echo quick", "background": True})
    server.add(Turn(tool_calls=[start, quick]), Turn(text="started"))
    web = start_web(project, server, loom_home)
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = context.new_page()
        page.goto(web.url)
        page.get_by_role("combobox", name="Permission mode").select_option("bypassPermissions")
        send(page, "start a server")
        expect(page.locator(".msg-assistant").last).to_have_text("started")
        panel = page.locator("#shells")
        running = panel.locator("tr[data-shell='b1']")
        expect(running).to_contain_text("sleep 31351")
        expect(running.locator(".shell-state")).to_have_text("running")
        expect(panel.locator("tr[data-shell='b2'] .shell-state")).to_have_text("exited (0)")
        expect(running.locator(".shell-time")).to_have_text(re.compile(r"^\d+ s$"))
        page.screenshot(path=str(shots / "36-background-panel.png"))
        running.get_by_role("button", name="Kill").click()
        expect(running.locator(".shell-state")).to_have_text("killed")
        assert _gone("31351")

        page.get_by_role("tab", name="Context").click()
        tab = page.locator("#tab-context")
        expect(tab).to_contain_text("Context window of")
        expect(tab.locator("tr[data-part='instructions']")).to_contain_text("project instructions")
        expect(tab.locator("tr[data-part='free']")).to_contain_text("%")
        page.screenshot(path=str(shots / "36-context-tab.png"))

        session_id = page.evaluate("document.body.dataset.session")
        with authed(web, origin=web.base) as client:
            data = client.get(f"/api/sessions/{session_id}/context").json()
            parts = {part["key"]: part["tokens"] for part in data["parts"]}
            assert sum(parts.values()) == data["window"] and parts["messages"] > 0
            missing = client.post(f"/api/sessions/{session_id}/shells/b9/kill")
            assert missing.status_code == 404 and "b9" in missing.json()["error"]
    finally:
        context.close()
        stop_web(web)
