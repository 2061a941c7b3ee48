"""The web page's rough edges a new user hit (issue 39): Esc did nothing in a permission
dialog while the hint said it cancels, the Changes tab counted the person's own files, a
saved edit's diff lost its context, the instructions notice moved below the tool cards
after a reload, and the trust banner gave each hook command a bullet of its own."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.web import WebServer, send, start_web, stop_web

EDIT = FakeToolCall(
    "file_edit", {"path": "hello.py", "old_string": "Hello", "new_string": "Goodbye"}
)


def test_escape_in_the_permission_dialog_denies_as_in_the_terminal(
    page: Any, web: WebServer, server: FakeLlmServer, shots: Path
) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": "touch by-esc.txt"})]))
    server.add(Turn(text="Fine, I left it."))
    send(page, "make a file")
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    expect(page.locator("#composer")).to_contain_text("Esc denies a permission question")
    page.screenshot(path=str(shots / "39-esc-hint.png"))
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page.locator(".tool[data-tool=shell] [data-status]")).to_have_text("Denied")
    expect(page.locator(".msg-assistant").last).to_contain_text("I left it")  # turn went on
    assert not (web.project / "by-esc.txt").exists()


def test_changes_count_what_the_session_changed_and_a_saved_diff_keeps_its_context(
    page: Any, web: WebServer, server: FakeLlmServer, shots: Path
) -> None:
    (web.project / "my-notes.txt").write_text("the person's own, never committed\n")
    (web.project / "AGENTS.md").write_text("Be brief.\n")
    server.add(Turn(text="Changing it.", tool_calls=[EDIT]), Turn(text="Done."))
    send(page, "say goodbye")
    page.wait_for_url(re.compile(r"/s/T-"))
    page.get_by_role("button", name="Allow once", exact=True).click()
    expect(page.locator(".msg-assistant").last).to_contain_text("Done.")
    card = page.locator(".tool[data-tool=file_edit]")
    expect(card.locator(".d-ctx").first).to_have_text(" def greet():")  # live: with context
    expect(card.locator(".d-add")).to_have_text("+    print('Goodbye')")

    page.get_by_role("tab", name="Changes").click()
    changes = page.locator("#tab-changes")
    expect(changes).to_contain_text("1 file changed by this thread")
    expect(changes).to_contain_text("hello.py")
    expect(changes).not_to_contain_text("my-notes.txt")
    page.screenshot(path=str(shots / "39-changes-own-files.png"))

    # the instructions notice stays where it came, above the answer's tool card
    page.reload()
    notice = page.locator(".notice", has_text="Instructions: AGENTS.md")
    expect(notice).to_have_count(1)
    order = page.locator(".notice, .tool").evaluate_all(
        "els => els.map(e => e.classList.contains('notice') ? 'notice' : 'tool')"
    )
    assert order.index("notice") < order.index("tool"), order

    page.get_by_role("button", name="Close").click()  # the session ends: a saved thread
    page.wait_for_load_state()
    expect(page.locator("#resume")).to_be_visible()
    card = page.locator(".tool[data-tool=file_edit]")
    expect(card.locator(".d-ctx").first).to_have_text(" def greet():")  # still with context
    expect(card.locator(".d-del")).to_have_text("-    print('Hello')")
    expect(card.locator(".d-add")).to_have_text("+    print('Goodbye')")
    page.screenshot(path=str(shots / "39-saved-diff.png"))


@pytest.fixture
def hooked(project: Path, server: FakeLlmServer, loom_home: Path) -> Iterator[WebServer]:
    (project / ".loom.toml").write_text(
        '[[hooks.PreToolUse]]\nmatcher = "shell"\ncommand = "echo one"\n\n'
        '[[hooks.PreToolUse]]\nmatcher = "file_edit"\ncommand = "echo two"\n\n'
        '[[hooks.Stop]]\ncommand = "./check.sh"\n'
    )
    running = start_web(project, server, loom_home)
    yield running
    stop_web(running)


def test_the_trust_banner_gives_each_hook_one_bullet(
    browser: Any, hooked: WebServer, shots: Path
) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(hooked.url)
    banner = page.get_by_role("region", name="Trust this project")
    bullets = banner.locator(".mcp-ask-details > li")
    expect(bullets).to_have_count(2)  # PreToolUse (both its commands), Stop
    expect(bullets.nth(0)).to_contain_text("hooks.PreToolUse: runs these commands")
    expect(bullets.nth(0)).to_contain_text("echo one")
    expect(bullets.nth(0)).to_contain_text("echo two")
    expect(bullets.nth(1)).to_contain_text("./check.sh")
    page.screenshot(path=str(shots / "39-trust-hooks.png"))
    context.close()
