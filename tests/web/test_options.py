"""`loom web` takes the session options (`--model`), and a model with no known price
shows its cost as unknown, never $0.00 (issue 26)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.web import send, start_web, stop_web


def test_web_model_option_and_an_unknown_price(
    browser: Any, project: Path, server: FakeLlmServer, loom_home: Path
) -> None:
    web = start_web(project, server, loom_home, "--model", "openai:my-local-model")
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = context.new_page()
        page.goto(web.url)
        expect(page.get_by_role("combobox", name="Model")).to_have_value("openai:my-local-model")
        server.add(Turn(text="answered locally"))
        send(page, "hello")
        expect(page.locator(".msg-assistant").last).to_have_text("answered locally")
        assert server.requests[-1].json["model"] == "my-local-model"
        usage = page.locator("#usage")
        expect(usage).to_contain_text("cost unknown")  # live, as the turn ends
        expect(usage).not_to_contain_text("$")
        page.reload()  # and as the server draws the page
        expect(page.locator("#usage")).to_contain_text("tokens · cost unknown")
        expect(page.locator("#usage")).not_to_contain_text("$")
    finally:
        context.close()
        stop_web(web)
