"""The sessions sidebar: search an old thread by a word, read it, resume it, rename,
delete and restore; a thread held by another Loom process cannot be resumed here."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.web import WebServer, loom_run, start_web


@pytest.fixture
def old_threads(project: Path, server: FakeLlmServer) -> list[str]:
    server.add(Turn(text="Zebra crossings need paint."))
    server.add(Turn(text="Unrelated answer."))
    return [
        loom_run(project, server, "Where do the zebra stripes go?"),
        loom_run(project, server, "Something else entirely"),
    ]


@pytest.fixture
def history_web(
    old_threads: list[str], project: Path, server: FakeLlmServer, loom_home: Path
) -> Iterator[WebServer]:
    running = start_web(project, server, loom_home)
    yield running
    running.process.terminate()
    running.process.wait(15)


@pytest.fixture
def tab(browser: Any, history_web: WebServer) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(history_web.url)
    yield page
    context.close()


def test_search_read_resume_rename(
    tab: Any,
    history_web: WebServer,
    server: FakeLlmServer,
    old_threads: list[str],
    shots: Path,
) -> None:
    rows = tab.locator("#thread-list .thread-row")
    expect(rows).to_have_count(2)
    tab.get_by_role("searchbox", name="Search threads").fill("zebra")
    expect(rows).to_have_count(1)
    expect(rows.first.locator("mark").first).to_contain_text(re.compile("zebra", re.I))
    tab.screenshot(path=str(shots / "06-sidebar-search.png"))
    rows.first.click()
    tab.wait_for_url(f"**/s/{old_threads[0]}")
    expect(tab.locator(".msg-assistant")).to_have_text("Zebra crossings need paint.")
    expect(tab.get_by_role("button", name="Resume")).to_be_visible()
    tab.screenshot(path=str(shots / "07-saved-thread.png"))

    tab.get_by_role("button", name="Resume").click()
    expect(tab.locator("#badge")).to_have_text("Ready")
    expect(tab.locator("#live-sessions .side-item")).to_have_count(1)
    server.add(Turn(text="They go across the road."))
    box = tab.get_by_role("textbox", name="Message")
    box.fill("and then?")
    box.press("Enter")
    expect(tab.locator(".msg-assistant").last).to_have_text("They go across the road.")

    tab.get_by_role("button", name="Rename").click()
    tab.locator("dialog input").fill("Zebra paint plan")
    tab.locator("dialog").get_by_role("button", name="Save").click()
    expect(tab.locator("#title")).to_have_text("Zebra paint plan")
    expect(tab.locator("#live-sessions .side-title")).to_have_text("Zebra paint plan")
    tab.get_by_role("button", name="Close").click()  # the session ends, the thread stays
    expect(tab.get_by_role("button", name="Resume")).to_be_visible()
    thread = json.loads(
        (history_web.home / "data" / "threads" / f"{old_threads[0]}.json").read_text()
    )
    assert thread["metadata"]["title"] == "Zebra paint plan"
    assert [m["role"] for m in thread["conversation"]["messages"]] == ["user", "assistant"] * 2


def test_delete_and_restore(tab: Any, history_web: WebServer, old_threads: list[str]) -> None:
    tab.goto(f"{history_web.base}/s/{old_threads[1]}")
    tab.once("dialog", lambda dialog: dialog.accept())
    tab.get_by_role("button", name="Delete").click()
    expect(tab.get_by_role("heading", name="Thread deleted")).to_be_visible()
    assert not (history_web.home / "data" / "threads" / f"{old_threads[1]}.json").exists()
    expect(tab.locator("#thread-list .thread-row")).to_have_count(1)
    tab.get_by_role("button", name="Restore").click()
    tab.wait_for_url(f"**/s/{old_threads[1]}")
    expect(tab.locator(".msg-assistant")).to_have_text("Unrelated answer.")
    assert (history_web.home / "data" / "threads" / f"{old_threads[1]}.json").exists()


def test_a_thread_open_elsewhere_says_where(
    tab: Any, history_web: WebServer, old_threads: list[str]
) -> None:
    from loom.store.local import LocalThreadStore

    lock = LocalThreadStore().acquire_writer(old_threads[0])  # as a REPL would hold it
    try:
        tab.goto(f"{history_web.base}/s/{old_threads[0]}")
        tab.get_by_role("button", name="Resume").click()
        alert = tab.get_by_role("alert")
        expect(alert).to_contain_text("open for writing by pid")
        expect(alert).to_contain_text(str(os.getpid()))
        expect(tab.get_by_role("button", name="Resume")).to_be_visible()
    finally:
        lock.release()


def test_cost_page_and_dark_theme(
    browser: Any, history_web: WebServer, old_threads: list[str], shots: Path
) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme="dark")
    page = context.new_page()
    try:
        page.goto(history_web.url)
        page.get_by_role("link", name="Cost").click()
        page.wait_for_url("**/cost")
        expect(page.get_by_role("heading", name="Per model")).to_be_visible()
        expect(page.locator("table").first).to_contain_text("anthropic:claude-sonnet-4-6")
        sessions = page.locator(".card-wide tbody tr")
        expect(sessions).to_have_count(2)
        expect(sessions.first).to_contain_text("$")
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(15, 17, 21)"  # the dark palette follows the system
        page.screenshot(path=str(shots / "09-cost-dark.png"))
        page.goto(f"{history_web.base}/s/{old_threads[0]}")
        page.screenshot(path=str(shots / "10-thread-dark.png"))
    finally:
        context.close()


def test_history_scrolls_in_pages(
    browser: Any, project: Path, server: FakeLlmServer, loom_home: Path
) -> None:
    from bench.gen_threads_corpus import generate

    generate(loom_home, 120, 4)
    running = start_web(project, server, loom_home)
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = context.new_page()
        page.goto(running.url)
        rows = page.locator("#thread-list .thread-row")
        expect(rows).to_have_count(0)  # the corpus's threads are other projects'
        page.get_by_label("All projects").check()
        expect(rows).to_have_count(50)  # the first page
        rows.last.scroll_into_view_if_needed()
        expect(rows).to_have_count(100)
        rows.last.scroll_into_view_if_needed()
        expect(rows).to_have_count(120)
        ids = page.eval_on_selector_all(
            "#thread-list .thread-row", "rows => rows.map(a => a.dataset.thread)"
        )
        assert len(set(ids)) == 120  # no row twice, none missing
    finally:
        context.close()
        running.process.terminate()
        running.process.wait(15)


def test_history_shows_this_projects_threads_with_a_toggle_for_every_one(
    tab: Any, server: FakeLlmServer, old_threads: list[str], tmp_path: Path
) -> None:
    """Issue 39 item 9: another project's thread (its folder named as this one's) is left
    out of the history until "All projects" is ticked, then shows its whole path; a
    search finds it either way."""
    from tests.support.git import init_repo

    other = init_repo(tmp_path / "other" / "proj", {"README.md": "elsewhere\n"})
    server.add(Turn(text="Zebra stripes elsewhere."))
    theirs = loom_run(other, server, "Where do the zebra stripes go over there?")
    tab.reload()
    rows = tab.locator("#thread-list .thread-row")
    expect(rows).to_have_count(2)
    expect(tab.locator(f'#thread-list [data-thread="{theirs}"]')).to_have_count(0)

    tab.get_by_label("All projects").check()
    expect(rows).to_have_count(3)
    expect(tab.locator(f'#thread-list [data-thread="{theirs}"] .elsewhere')).to_have_text(
        f"in {other}"
    )
    tab.get_by_label("All projects").uncheck()
    expect(rows).to_have_count(2)

    tab.get_by_role("searchbox", name="Search threads").fill("zebra")
    expect(rows).to_have_count(2)
    expect(tab.locator(f'#thread-list [data-thread="{theirs}"]')).to_have_count(1)


def test_an_attached_file_is_a_labelled_block_not_the_persons_words(
    tab: Any, history_web: WebServer, server: FakeLlmServer, project: Path
) -> None:
    """Issue 39 item 5: `@hello.py:1-1` is shown as an attachment under the message."""
    server.add(Turn(text="It greets."))
    thread_id = loom_run(project, server, "look at @hello.py:1-1")
    tab.goto(f"{history_web.base}/s/{thread_id}")
    body = tab.locator(".msg-user .msg-body")
    expect(body.locator(".msg-attached summary")).to_have_text("Attached: hello.py:1-1")
    words = body.evaluate("b => b.firstChild.textContent")
    assert words == "look at @hello.py:1-1"
    body.locator(".msg-attached summary").click()
    expect(body.locator(".msg-attached pre")).to_contain_text("def greet():")
