"""A project's own MCP server in `loom web`: the page shows what it would run and starts
it only when the person presses Approve; its tools then reach the agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.mcp import HELPER, define_helper_server
from tests.support.web import WebServer, send, wait_for


def test_a_project_mcp_server_starts_after_approve_in_the_page(
    page: Any, web: WebServer, server: FakeLlmServer, shots: Path
) -> None:
    define_helper_server(web.project)
    server.add(Turn(text="Hello without it."))
    send(page, "hi")
    banner = page.get_by_role("region", name="MCP server helper")
    expect(banner).to_contain_text("defines the MCP server helper, which runs")
    expect(banner).to_contain_text(HELPER.name)
    expect(page.locator(".msg-assistant").last).to_have_text("Hello without it.")
    # the banner asks: no error line telling to run `loom mcp approve` beside it
    assert "not started" not in page.locator("#messages").inner_text()
    assert not [t for t in server.requests[0].json.get("tools", [])
                if t["name"].startswith("mcp__")]  # fmt: skip
    page.screenshot(path=str(shots / "30-mcp-approval.png"))

    page.reload()  # the banner is part of the page, not only of the stream
    banner = page.get_by_role("region", name="MCP server helper")
    banner.get_by_role("button", name="Approve and start").click()
    expect(banner).to_have_count(0)
    expect(page.locator(".notice").last).to_contain_text("Approved the MCP server 'helper'")

    server.add(
        Turn(tool_calls=[FakeToolCall("mcp__helper__echo", {"text": "from the page"})]),
        Turn(text="It echoed."),
    )
    send(page, "echo it")
    page.get_by_role("button", name="Allow once", exact=True).click()
    expect(page.locator(".msg-assistant").last).to_contain_text("It echoed.")
    wait_for(lambda: len(server.requests) == 3)
    assert "mcp__helper__echo" in [t["name"] for t in server.requests[1].json["tools"]]
    assert "echo: from the page" in json.dumps(server.requests[2].json["messages"])
