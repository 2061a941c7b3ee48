"""A person using `loom web` in Chromium: prompt, stream, permission modal, diffs, deny,
reload mid-stream, two tabs, cancel."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.web import WebServer, send, wait_for

EDIT = FakeToolCall(
    "file_edit", {"path": "hello.py", "old_string": "Hello", "new_string": "Goodbye"}
)


def test_edit_with_permission_end_to_end(
    page: Any, web: WebServer, server: FakeLlmServer, shots: Path
) -> None:
    server.add(Turn(text=["I will ", "change the ", "greeting."], tool_calls=[EDIT]))
    answer = "Done: **greet()** now says `Goodbye`.\n\n```python\nprint('Goodbye')\n```"
    server.add(Turn(text=answer))
    page.screenshot(path=str(shots / "01-new-session.png"))
    send(page, "Say goodbye instead")
    page.wait_for_url(re.compile(r"/s/T-"))
    expect(page.locator(".msg-user").first).to_have_text("Say goodbye instead")
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("file_edit")
    expect(dialog).to_contain_text("hello.py")
    expect(dialog.locator(".d-del")).to_contain_text("print('Hello')")
    expect(dialog.locator(".d-add")).to_contain_text("print('Goodbye')")
    for name in ("Allow once", "Allow always", "Deny"):
        expect(page.get_by_role("button", name=name, exact=True)).to_be_visible()
    expect(page.locator("#badge")).to_have_text("Waiting for permission")
    page.screenshot(path=str(shots / "02-permission-modal.png"))
    assert "Hello" in (web.project / "hello.py").read_text()  # nothing before the answer

    page.get_by_role("button", name="Allow once", exact=True).click()
    expect(dialog).to_be_hidden()
    expect(page.locator(".msg-assistant .md strong")).to_have_text("greet()")
    expect(page.locator(".msg-assistant pre.code.hl")).to_contain_text("print('Goodbye')")
    card = page.locator(".tool[data-tool=file_edit]")
    expect(card.locator("[data-status]")).to_have_text("Done")
    expect(card.locator(".d-add")).to_contain_text("Goodbye")
    expect(card.locator(".tool-output")).not_to_have_attribute("open", "")
    assert (web.project / "hello.py").read_text() == "def greet():\n    print('Goodbye')\n"
    expect(page.locator("#badge")).to_have_text("Ready")
    expect(page.locator("#usage")).to_contain_text("tokens")

    expect(page.get_by_role("tab")).to_have_text(
        ["Files", "Changes", "Terminal", "Graph", "Context"]
    )
    page.get_by_role("tab", name="Changes").click()
    changes = page.locator("#tab-changes")
    expect(changes).to_contain_text("hello.py")
    expect(changes.locator(".d-add")).to_contain_text("print('Goodbye')")
    expect(changes.locator(".d-del")).to_contain_text("print('Hello')")
    page.screenshot(path=str(shots / "03-chat-changes.png"))

    page.get_by_role("tab", name="Files").click()
    page.locator("#file-tree a.file", has_text="hello.py").click()
    expect(page.locator("#file-preview pre.code")).to_contain_text("Goodbye")
    page.screenshot(path=str(shots / "04-files-preview.png"))

    (thread_file,) = web.threads()
    thread = json.loads(thread_file.read_text())
    roles = [m["role"] for m in thread["conversation"]["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert thread["conversation"]["messages"][2]["tool_name"] == "file_edit"
    assert "Goodbye" in thread["conversation"]["messages"][3]["content"]


def test_deny_keeps_the_file(page: Any, web: WebServer, server: FakeLlmServer) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": "touch made-by-loom.txt"})]))
    server.add(Turn(text="Understood, I did not run it."))
    send(page, "make a file")
    dialog = page.get_by_role("dialog")
    expect(dialog.locator(".perm-subject")).to_have_text("touch made-by-loom.txt")
    page.get_by_role("button", name="Deny", exact=True).click()
    expect(page.locator(".msg-assistant").last).to_contain_text("I did not run it")
    expect(page.locator(".tool[data-tool=shell] [data-status]")).to_have_text("Denied")
    assert not (web.project / "made-by-loom.txt").exists()
    page.get_by_role("tab", name="Terminal").click()
    expect(page.locator("#tab-terminal .term-cmd")).to_have_text("$ touch made-by-loom.txt")
    tool_result = server.requests[1].json["messages"][-1]["content"][0]
    assert tool_result["is_error"] is True and "denied" in tool_result["content"].lower()


def test_reload_and_second_tab_mid_stream(
    page: Any, browser: Any, web: WebServer, server: FakeLlmServer, shots: Path
) -> None:
    words = [f"word{i} " for i in range(40)]
    server.add(Turn(text=words, chunk_delay=0.08))
    send(page, "stream slowly")
    page.wait_for_url(re.compile(r"/s/T-"))
    stream = page.locator(".streaming .stream")
    expect(stream).to_contain_text("word3 ")
    page.reload()  # mid-stream: the render holds what came so far, the stream the rest
    # a second browser profile: it gets its cookie from the launch URL, then the session
    second = browser.new_context().new_page()
    second.goto(f"{page.url}?token={web.token}")
    expect(page.locator(".msg-assistant").last).to_have_text("".join(words).strip())
    expect(second.locator(".msg-assistant").last).to_have_text("".join(words).strip())
    for tab in (page, second):
        expect(tab.locator(".streaming")).to_have_count(0)
        expect(tab.locator(".msg-user")).to_have_count(1)
        expect(tab.locator(".msg-assistant")).to_have_count(1)
        expect(tab.locator(".msg-assistant")).to_have_text("".join(words).strip())
    page.screenshot(path=str(shots / "05-after-reload.png"))
    second.context.close()


# Records the streaming message's chunks after every DOM change (a MutationObserver sees
# each one, however many deltas one SSE frame carried), from the page's first moment on.
# While a reloaded page is still parsing, the stream's element may be there before its
# chunk, and the stylesheet (which draws the caret) may not have loaded yet: `styled`
# says whether the caret can be judged.
STREAM_LOG = """
window.loomStreamLog = [];
new MutationObserver(() => {
  const body = document.querySelector('.streaming .stream');
  if (!body) return;
  const last = body.lastElementChild;
  window.loomStreamLog.push({
    chunks: [...body.children].map((c) => c.textContent),
    loose: [...body.childNodes].some((n) => n.nodeType === Node.TEXT_NODE),
    caret: last ? getComputedStyle(last, '::after').content : 'none',
    styled: [...document.querySelectorAll('link[rel=stylesheet]')].every((l) => l.sheet),
  });
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


def check_stream_log(log: list[dict[str, Any]], full: str) -> None:
    for entry in log:
        chunks = entry["chunks"]
        assert full.startswith("".join(chunks)), chunks  # nothing lost, doubled or reordered
        assert all(c.endswith("\n") for c in chunks[:-1]), chunks  # a new block = a new line
        assert not entry["loose"]
        if entry["styled"] and chunks:  # the caret sits on the last chunk
            assert entry["caret"] == '"▍"', entry


def test_a_long_answer_streams_in_chunks_and_ends_as_markdown(
    page: Any, server: FakeLlmServer
) -> None:
    """A long answer is streamed into blocks of about 1 KB that each end after a newline
    (so a delta costs the same at the end as at the start), survives a reload mid-stream
    (the rendered partial is the first chunk), and ends as rendered Markdown."""
    lines = ["Here is the plan.\n", "\n"]
    lines += [f"- step {i}: change the thing number {i}\n" for i in range(70)]
    lines += ["\n", "```python\n", "def done():\n", "    return True\n", "```\n"]
    full = "".join(lines)
    server.add(Turn(text=lines, chunk_delay=0.07))
    page.add_init_script(STREAM_LOG)
    send(page, "write a long plan")
    page.wait_for_url(re.compile(r"/s/T-"))
    wait_for(lambda: page.evaluate("window.loomStreamLog.some((e) => e.chunks.length >= 2)"))
    check_stream_log(page.evaluate("window.loomStreamLog"), full)
    page.reload()  # the render holds one chunk with what came so far; deltas continue it
    answer = page.locator(".msg-assistant").last
    expect(answer.locator("li")).to_have_count(70)
    expect(answer.locator("pre.code.hl")).to_contain_text("return True")
    expect(page.locator(".streaming")).to_have_count(0)
    check_stream_log(page.evaluate("window.loomStreamLog"), full)


def test_two_tabs_follow_one_session(page: Any, web: WebServer, server: FakeLlmServer) -> None:
    server.add(Turn(text="first answer"))
    server.add(Turn(text="second answer"))
    box = page.get_by_role("textbox", name="Message")
    box.fill("one")
    box.press("Shift+Enter")  # a new line, not a send
    box.type("more")
    assert box.input_value() == "one\nmore" and "/s/" not in page.url
    box.press("Enter")
    page.wait_for_url(re.compile(r"/s/T-"))
    expect(page.locator(".msg-assistant")).to_have_text("first answer")
    expect(page.locator(".msg-user")).to_have_text("one\nmore")
    other = page.context.new_page()  # same browser profile: the cookie is shared
    other.goto(page.url)
    expect(other.locator(".msg-assistant")).to_have_text("first answer")
    send(other, "two")
    for tab in (page, other):
        expect(tab.locator(".msg-assistant").last).to_have_text("second answer")
        expect(tab.locator(".msg-user")).to_have_count(2)
        expect(tab.locator(".msg-assistant")).to_have_count(2)
    other.close()


def test_cancel_a_running_turn_with_escape(
    page: Any, web: WebServer, server: FakeLlmServer
) -> None:
    server.add(Turn(text="too late", delay=30))
    send(page, "take your time")
    page.wait_for_url(re.compile(r"/s/T-"))
    expect(page.locator("#badge")).to_have_text("Thinking")
    expect(page.get_by_role("button", name="Cancel")).to_be_visible()
    wait_for(lambda: len(server.requests) == 1)  # the model is working on it
    page.keyboard.press("Escape")
    expect(page.locator("#badge")).to_have_text("Ready")
    expect(page.get_by_role("button", name="Cancel")).to_be_hidden()
    server.add(Turn(text="after cancel"))
    send(page, "and now?")
    expect(page.locator(".msg-assistant").last).to_have_text("after cancel")
    assert "too late" not in page.locator("#messages").inner_text()


def test_cancel_button_stops_a_running_tool(
    page: Any, web: WebServer, server: FakeLlmServer
) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": "sleep 30"})]))
    server.add(Turn(text="stopped"))
    send(page, "wait")
    page.get_by_role("button", name="Allow once", exact=True).click()
    expect(page.locator(".tool[data-tool=shell] [data-status]")).to_have_text("Running")
    page.get_by_role("button", name="Cancel").click()
    expect(page.locator(".tool[data-tool=shell] [data-status]")).to_have_text("Interrupted")
    expect(page.locator("#badge")).to_have_text("Ready")


def test_architect_mode_shows_the_plan_and_its_steps(
    page: Any, web: WebServer, server: FakeLlmServer, shots: Path
) -> None:
    plan = {
        "summary": "Greet politely",
        "steps": [
            {"file": "hello.py", "action": "read", "description": "look at greet()"},
            {"file": "hello.py", "action": "read", "description": "check the wording"},
        ],
    }
    server.add(Turn(text=json.dumps(plan)))
    server.add(Turn(text="Read it: it prints Hello."))
    server.add(Turn(text="The wording is fine."))
    for _ in range(3):
        server.add(Turn(text="All steps done."))
    page.get_by_role("button", name="Architect").click()
    send(page, "make the greeting polite")
    page.wait_for_url(re.compile(r"/s/T-"))
    expect(page.get_by_role("button", name="Architect")).to_have_attribute("aria-pressed", "true")
    steps = page.locator("#plan .step")
    expect(page.locator("#plan")).to_contain_text("Greet politely")
    expect(steps).to_have_count(2)
    expect(steps.nth(1)).to_have_class(re.compile("step-completed"))
    expect(steps.nth(0)).to_contain_text("look at greet()")
    page.screenshot(path=str(shots / "08-architect-plan.png"))
    models = [r.json["model"] for r in server.requests]
    assert models[0] == "claude-opus-4-6" and "claude-haiku-4-5" in models[1:]


def test_retries_are_shown_as_they_happen(page: Any, server: FakeLlmServer) -> None:
    server.add(Turn(status=529, error_message="overloaded", retry_after=0.01))
    server.add(Turn(text="made it"))
    send(page, "try")
    expect(page.locator(".notice-warn")).to_contain_text("retry 1")
    expect(page.locator(".msg-assistant").last).to_have_text("made it")


def test_model_selector_switches_the_next_call(page: Any, server: FakeLlmServer) -> None:
    server.add(Turn(text="from sonnet"))
    server.add(Turn(text="from gpt"))
    send(page, "one")
    page.wait_for_url(re.compile(r"/s/T-"))
    expect(page.locator(".msg-assistant")).to_have_text("from sonnet")
    model = page.get_by_role("combobox", name="Model")
    model.fill("openai:gpt-5")
    model.press("Tab")  # change event
    expect(page.locator(".notice")).to_contain_text("openai:gpt-5")
    send(page, "two")
    expect(page.locator(".msg-assistant").last).to_have_text("from gpt")
    sent = server.requests[-1]
    assert sent.format == "responses" and sent.json["model"] == "gpt-5"
    model.fill("nonsense")
    model.press("Tab")
    expect(page.get_by_role("alert")).to_contain_text("nonsense")


def test_undo_and_redo_the_agents_last_turn(
    page: Any, web: WebServer, server: FakeLlmServer, shots: Path
) -> None:
    original = (web.project / "hello.py").read_text()
    server.add(
        Turn(tool_calls=[FakeToolCall("file_write", {"path": "hello.py", "content": "changed\n"})]),
        Turn(text="Rewrote hello.py."),
    )
    send(page, "rewrite hello.py")
    page.get_by_role("button", name="Allow once", exact=True).click()
    expect(page.locator(".msg-assistant").last).to_contain_text("Rewrote")
    expect(page.locator("#badge")).to_have_text("Ready")
    assert (web.project / "hello.py").read_text() == "changed\n"

    page.get_by_role("button", name="Undo", exact=True).click()
    expect(page.locator(".toast").last).to_contain_text("Restored 1 file(s): hello.py")
    assert (web.project / "hello.py").read_text() == original
    page.screenshot(path=str(shots / "09-undo.png"))
    page.get_by_role("button", name="Redo", exact=True).click()
    expect(page.locator(".toast").last).to_contain_text("Reapplied 1 file(s)")
    assert (web.project / "hello.py").read_text() == "changed\n"

    # a hand edit since the turn is only overwritten after the person confirms
    (web.project / "hello.py").write_text("mine\n")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_role("button", name="Undo", exact=True).click()
    expect(page.locator(".toast").last).to_contain_text("your edits are kept")
    assert (web.project / "hello.py").read_text() == "mine\n"
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Undo", exact=True).click()
    expect(page.locator(".toast").last).to_contain_text("Restored 1 file(s)")
    assert (web.project / "hello.py").read_text() == original


def test_the_todo_list_shows_in_the_plan_panel(
    page: Any, server: FakeLlmServer, project: Path
) -> None:
    (project / "AGENTS.md").write_text("Be brief.\n")
    todos = [{"content": "Read hello.py", "status": "completed"},
             {"content": "Make it polite", "status": "in_progress"},
             {"content": "Run the tests", "status": "pending"}]  # fmt: skip
    server.add(Turn(tool_calls=[FakeToolCall("todo_write", {"todos": todos})]))
    server.add(Turn(text="Working on it."))
    send(page, "make the greeting polite")
    page.wait_for_url(re.compile(r"/s/T-"))
    expect(page.locator(".notice")).to_contain_text("Instructions: AGENTS.md")
    expect(page.locator("#plan")).to_contain_text("Todo (1/3 done)")
    steps = page.locator("#plan .step")
    expect(steps).to_have_count(3)
    expect(steps.nth(0)).to_have_class(re.compile("step-completed"))
    expect(steps.nth(1)).to_have_class(re.compile("step-started"))
    expect(steps.nth(2)).to_contain_text("Run the tests")
    page.reload()  # the panel comes back from the thread
    expect(page.locator("#plan .step")).to_have_count(3)


DROP_PNG = """async ([name, b64]) => {
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, { type: "image/png" }));
  const form = document.querySelector("#composer");
  form.dispatchEvent(new DragEvent("dragover", { dataTransfer: transfer, bubbles: true,
                                                 cancelable: true }));
  form.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true,
                                             cancelable: true }));
}"""


def test_an_image_dropped_on_the_message_box_reaches_the_model(
    page: Any, server: FakeLlmServer
) -> None:
    import base64

    from tests.support.images import png

    image = png(seed=7)
    server.add(Turn(text="A small red picture."))
    page.evaluate(DROP_PNG, ["shot.png", base64.b64encode(image).decode()])
    expect(page.locator("#attachments .attachment")).to_contain_text("shot.png")
    send(page, "what is this?")
    page.wait_for_url(re.compile(r"/s/T-"))
    expect(page.locator(".msg-assistant").last).to_have_text("A small red picture.")
    expect(page.locator(".msg-user").first).to_contain_text("Image: shot.png (PNG")
    content = server.requests[0].json["messages"][0]["content"]
    sent = [base64.b64decode(b["source"]["data"]) for b in content if b["type"] == "image"]
    assert sent == [image]
    expect(page.locator("#attachments .attachment")).to_have_count(0)
