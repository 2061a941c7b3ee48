"""The permission mode chosen on the web page (issue 36): a session started in plan mode
refuses a write; switched to acceptEdits on the live page, the write runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.web import send, start_web, stop_web


def test_plan_chosen_on_the_page_refuses_and_accept_edits_then_writes(
    browser: Any, project: Path, server: FakeLlmServer, loom_home: Path
) -> None:
    write = FakeToolCall("file_write", {"path": "x.txt", "content": "x"})
    server.add(Turn(tool_calls=[write]), Turn(text="planned only"))
    web = start_web(project, server, loom_home)
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = context.new_page()
        page.goto(web.url)
        mode = page.get_by_role("combobox", name="Permission mode")
        mode.select_option("plan")
        send(page, "add x")
        expect(page.locator(".msg-assistant").last).to_have_text("planned only")
        assert not (project / "x.txt").exists()
        assert "plan mode" in str(server.requests[1].json["messages"][-1]["content"])
        page.reload()  # the live page draws the session's mode
        mode = page.get_by_role("combobox", name="Permission mode")
        expect(mode).to_have_value("plan")
        with page.expect_response(lambda r: r.url.endswith("/permission_mode")) as switched:
            mode.select_option("acceptEdits")
        assert switched.value.json() == {"permission_mode": "acceptEdits"}
        server.add(Turn(tool_calls=[write]), Turn(text="written"))
        send(page, "now write it")
        expect(page.locator(".msg-assistant").last).to_have_text("written")
        assert (project / "x.txt").read_text() == "x"
    finally:
        context.close()
        stop_web(web)
