"""Files that attack the page's previews: a FIFO, a NUL in the path, a huge sparse file."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.web import WebServer, authed, send


def peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))  # type: ignore[union-attr]


def test_an_edit_of_a_fifo_asks_and_the_page_keeps_answering(
    page: Any, web: WebServer, server: FakeLlmServer, shots: Path
) -> None:
    # Reading a FIFO to preview the change used to block the server's event loop: no
    # dialog, and every tab, Cancel and Deny stopped answering.
    os.mkfifo(web.project / "notes.txt")
    write = FakeToolCall("file_write", {"path": "notes.txt", "content": "new notes\n"})
    server.add(Turn(tool_calls=[write]), Turn(text="Fine, I left it alone."))
    send(page, "rewrite the notes")
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("notes.txt")
    expect(dialog.locator(".d-add")).to_contain_text("new notes")
    page.screenshot(path=str(shots / "hostile-fifo-permission.png"))
    page.get_by_role("button", name="Deny", exact=True).click()
    expect(page.locator(".msg-assistant").last).to_contain_text("I left it alone")
    assert (web.project / "notes.txt").is_fifo()


def test_previews_refuse_a_fifo_and_a_nul_and_read_no_more_than_they_show(
    web: WebServer,
) -> None:
    os.mkfifo(web.project / "pipe.txt")
    with open(web.project / "huge.log", "wb") as handle:  # 512 MiB, nearly all of it a hole
        handle.write(b"first line of a huge log\n" * 40)
        handle.truncate(512 << 20)
    with authed(web, origin=web.base) as browser:
        fifo = browser.get("/api/files/preview", params={"path": "pipe.txt"})
        assert fifo.status_code == 404, fifo.text
        nul = browser.get("/api/files/preview?path=hello.py%00.txt")
        assert nul.status_code == 404, nul.text
        outside = browser.get("/api/files/preview", params={"path": "../../etc/passwd"})
        assert outside.status_code == 404
        before = peak_rss_kib(web.process.pid)
        huge = browser.get("/api/files/preview", params={"path": "huge.log"})
        assert huge.status_code == 200, huge.text
        grew = peak_rss_kib(web.process.pid) - before
    assert grew < 64 * 1024, f"the preview of a 512 MiB file took {grew // 1024} MiB"
