"""The web page shows the model's reasoning as a folded block above the answer, as text
(never HTML), live and after a reload (Debian's Chromium through Playwright)."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.web import send

THOUGHT = "Compare <b>both</b> options first."


def test_thinking_is_a_folded_block_of_text(page: Any, server: FakeLlmServer) -> None:
    server.add(Turn(text="from sonnet"), Turn(thinking=THOUGHT, text="Option A."))
    send(page, "one")
    page.wait_for_url(re.compile(r"/s/T-"))
    expect(page.locator(".msg-assistant")).to_have_text("from sonnet")
    model = page.get_by_role("combobox", name="Model")
    model.fill("openai:gpt-5")  # a reasoning model: its summaries are shown
    model.press("Tab")
    expect(page.locator(".notice")).to_contain_text("openai:gpt-5")
    send(page, "A or B?")
    answer = page.locator(".msg-assistant").last
    expect(answer.locator(".msg-body")).to_have_text("Option A.")
    block = answer.locator("details.thinking")
    expect(block).to_have_count(1)
    expect(block.locator(".thinking-text")).not_to_be_visible()  # folded
    block.locator("summary").click()
    expect(block.locator(".thinking-text")).to_have_text(THOUGHT)  # as text, not markup
    expect(block.locator("b")).to_have_count(0)
    page.reload()
    again = page.locator(".msg-assistant").last.locator("details.thinking")
    expect(again.locator(".thinking-text")).to_have_text(THOUGHT, use_inner_text=False)


def test_a_reload_while_the_model_thinks_keeps_its_thinking(
    page: Any, server: FakeLlmServer
) -> None:
    pieces = [f"step{i} " for i in range(30)]
    server.add(Turn(thinking=pieces, text=["Option ", "B."], chunk_delay=0.08))
    model = page.get_by_role("combobox", name="Model")
    model.fill("openai:gpt-5")
    model.press("Tab")
    send(page, "think slowly")
    page.wait_for_url(re.compile(r"/s/T-"))
    live = page.locator(".streaming details.thinking .thinking-text")
    expect(live).to_contain_text("step3 ", use_inner_text=False)
    page.reload()  # mid-thought: the render holds the thinking so far, the stream the rest
    expect(page.locator(".streaming details.thinking")).to_have_count(1)
    expect(live).to_contain_text("step0 step1 step2 step3 ", use_inner_text=False)
    answer = page.locator(".msg-assistant").last
    expect(answer.locator(".msg-body")).to_have_text("Option B.")
    done = answer.locator("details.thinking .thinking-text")
    expect(done).to_have_text("".join(pieces), use_inner_text=False)
