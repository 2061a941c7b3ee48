"""The web page's small rough edges (issue 26, "Smaller things"): the Graph cut off its
right-hand node and its boxes said "uncertain" for nodes the pulse did not count so;
error toasts covered the Send button; "Allow always" did not say what it covers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.web import WebServer, loom_run, send


def log(**arguments: object) -> FakeToolCall:
    return FakeToolCall("decision_log", arguments)


def test_a_wide_graph_shows_every_node_and_counts_match_the_boxes(
    browser: Any, web: WebServer, server: FakeLlmServer, project: Path
) -> None:
    options = [f"Option number {n}" for n in range(6)]  # one row wider than the panel
    server.add(
        Turn(tool_calls=[log(type="goal", title="Faster search", confidence=90)]),
        Turn(tool_calls=[log(type="option", title=t, parent="Faster search") for t in options]),
        Turn(tool_calls=[log(type="decision", title="Use a trigram index", confidence=40,
                             parent="Option number 0", edge_type="chosen")]),
        Turn(tool_calls=[log(type="action", title="Build the index", edge_type="requires",
                             parent="Use a trigram index")]),
        Turn(text="Planned."),
    )  # fmt: skip
    loom_run(project, server, "plan the search speed-up")
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(web.url)
    page.get_by_role("tab", name="Graph").click()
    tab = page.locator("#tab-graph")
    expect(tab.locator("svg .node")).to_have_count(9)
    canvas = tab.locator(".graph-canvas").bounding_box()
    assert canvas is not None
    for node in tab.locator("svg .node-option").all():
        box = node.bounding_box()
        assert box is not None
        assert box["x"] >= canvas["x"] and box["x"] + box["width"] <= canvas["x"] + canvas["width"]
    # the decision was logged at 40 (low confidence); the action requires it (uncertain)
    expect(tab.locator(".pulse")).to_contain_text("1 low confidence")
    expect(tab.locator(".pulse")).to_contain_text("1 uncertain")
    expect(tab.locator("svg .node.low")).to_have_count(1)
    expect(tab.locator("svg .node.uncertain")).to_have_count(1)
    expect(tab.locator("svg .node.uncertain")).to_contain_text("Build the index")
    context.close()


def test_allow_always_says_what_it_covers(page: Any, server: FakeLlmServer) -> None:
    server.add(
        Turn(tool_calls=[FakeToolCall("shell", {"command": "git status --short"})]),
        Turn(text="Clean."),
    )
    send(page, "is the tree clean?")
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    covers = dialog.locator("#perm-covers")
    expect(covers).to_contain_text("Allow always: every `git status ...` command")
    button = page.get_by_role("button", name="Allow always", exact=True)
    expect(button).to_have_attribute("aria-describedby", "perm-covers")
    page.get_by_role("button", name="Deny", exact=True).click()
    expect(dialog).to_be_hidden()


def test_an_error_toast_leaves_the_send_button_free(page: Any, server: FakeLlmServer) -> None:
    page.set_viewport_size({"width": 720, "height": 800})  # a half-screen window
    server.add(Turn(text="Hello."))
    send(page, "hi")
    expect(page.locator(".msg-assistant").last).to_contain_text("Hello.")
    expect(page.locator("#badge")).to_have_text("Ready")
    page.get_by_role("button", name="Undo", exact=True).click()  # nothing to undo: an error
    toast = page.locator(".toast-error").last
    expect(toast).to_be_visible()
    send_button = page.get_by_role("button", name="Send", exact=True)
    # nowhere over the message box and its Send button (a short toast cleared Send
    # itself by luck; a long one covered it)
    toast_box, composer = toast.bounding_box(), page.locator("#composer").bounding_box()
    assert toast_box is not None and composer is not None
    apart_x = toast_box["x"] + toast_box["width"] <= composer["x"] or (
        composer["x"] + composer["width"] <= toast_box["x"]
    )
    apart_y = toast_box["y"] + toast_box["height"] <= composer["y"] or (
        composer["y"] + composer["height"] <= toast_box["y"]
    )
    assert apart_x or apart_y, (toast_box, composer)
    send_button.click(trial=True)  # nothing on top of it takes the click
