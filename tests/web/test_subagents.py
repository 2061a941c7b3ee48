"""`loom web` in Chromium with sub-agents: a running child is listed under its parent in
the sidebar, its question opens the parent's permission dialog, the task card shows its
steps and links to its thread, and the child leaves the live list when it is done."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.web import WebServer, send


def test_a_child_runs_under_its_parent_and_asks_in_the_parents_dialog(
    page: Any, web: WebServer, server: FakeLlmServer, shots: Path
) -> None:
    brief = "Change the greeting in hello.py"
    edit = FakeToolCall("file_edit", {"path": "hello.py", "old_string": "Hello",
                                      "new_string": "Goodbye"})  # fmt: skip
    server.add(
        Turn(tool_calls=[FakeToolCall("task", {"description": "update greeting",
                                               "prompt": brief})]),
        Turn(text="The sub-agent changed it."),
    )  # fmt: skip
    server.for_first_message(brief, Turn(tool_calls=[edit], delay=0.5),
                             Turn(text="changed to Goodbye"))  # fmt: skip
    send(page, "please update the greeting")
    page.wait_for_url(re.compile(r"/s/T-"))
    parent_id = page.url.rsplit("/s/", 1)[1].split("?")[0]

    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()  # the child's edit, asked on the parent's page
    expect(dialog).to_contain_text("sub-agent general (update greeting) asks")
    expect(dialog).to_contain_text("file_edit")
    child = page.locator(f"#live-sessions .side-child[data-parent='{parent_id}']")
    expect(child).to_contain_text("update greeting")
    card = page.locator(".tool[data-tool=task]")
    expect(card.locator("[data-child]")).to_contain_text("general sub-agent: started")
    page.screenshot(path=str(shots / "20-sub-agent-asks.png"))
    page.get_by_role("button", name="Allow once", exact=True).click()

    expect(page.locator(".msg-assistant").last).to_contain_text("The sub-agent changed it.")
    expect(card.locator("[data-status]")).to_have_text("Done")
    link = card.locator("[data-child]")
    expect(link).to_have_attribute("href", re.compile(r"/s/T-"))
    expect(page.locator("#live-sessions .side-child")).to_have_count(0)  # it has ended
    assert "Goodbye" in (web.project / "hello.py").read_text()
    page.screenshot(path=str(shots / "21-sub-agent-done.png"))
    link.click()
    expect(page.locator(".msg-user").first).to_have_text(brief)  # the child's own thread
    expect(page.locator(".msg-assistant").last).to_contain_text("changed to Goodbye")
    # the child's page names its parent; the history lists the child under its parent
    family = page.locator("#family")
    expect(family).to_contain_text(f"sub-agent (general) of {parent_id}")
    expect(family.get_by_role("link")).to_have_attribute("href", f"/s/{parent_id}")
    rows = page.locator("#thread-list .thread-row")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_have_attribute("data-thread", parent_id)
    expect(rows.nth(1)).to_have_attribute("data-parent", parent_id)
    expect(rows.nth(1)).to_have_class(re.compile(r"\bside-child\b"))
    expect(rows.nth(1)).to_contain_text("↳ update greeting")
    page.screenshot(path=str(shots / "22-sub-agent-thread.png"))
