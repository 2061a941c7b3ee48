"""The Graph tab: what `loom run` logged in this project, drawn on the server as SVG,
the pulse line above it, and a node's details on click."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.web import WebServer, loom_run


def log(**arguments: object) -> FakeToolCall:
    return FakeToolCall("decision_log", arguments)


def test_graph_tab_draws_the_projects_decisions(
    browser: Any, web: WebServer, server: FakeLlmServer, project: Path, shots: Path
) -> None:
    server.add(
        Turn(tool_calls=[log(type="goal", title="Faster search", confidence=90)]),
        Turn(tool_calls=[
            log(type="option", title="Trigram index", parent="Faster search"),
            log(type="option", title="Cache results", parent="Faster search"),
        ]),
        Turn(tool_calls=[log(type="decision", title="Use a trigram index",
                             parent="Trigram index", edge_type="chosen", confidence=40)]),
        Turn(text="Planned."),
    )  # fmt: skip
    loom_run(project, server, "plan the search speed-up")
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(web.url)
    page.get_by_role("tab", name="Graph").click()
    tab = page.locator("#tab-graph")
    expect(tab.locator(".pulse")).to_contain_text("Health")
    expect(tab.locator(".pulse")).to_contain_text("1 active goal")
    expect(tab.locator("svg .node")).to_have_count(4)
    expect(tab.locator("svg .node-goal")).to_contain_text("Faster search")
    expect(tab.locator("svg .edge-chosen")).to_have_count(1)
    low = tab.locator("svg .node-decision")
    expect(low).to_have_class("node node-decision low")  # logged at 40: low confidence
    low.click()
    details = tab.locator(".node-details:not([hidden])")
    expect(details).to_have_count(1)
    expect(details).to_contain_text("Use a trigram index")
    expect(details).to_contain_text("confidence 40")
    expect(details).to_contain_text("chosen")
    page.screenshot(path=str(shots / "08-graph.png"))
    context.close()


def test_graph_tab_with_nothing_logged_says_so(page: Any) -> None:
    page.get_by_role("tab", name="Graph").click()
    expect(page.locator("#tab-graph")).to_contain_text("No decisions logged in this project")
