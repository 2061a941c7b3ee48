"""`loom web` with a thread holding a 50 MB message (issue 26): its page shows the message
folded (a 50 MB page, rendered on the event loop, stalled every tab), resuming it reaches
the model, and SIGTERM while it is being processed ends the server. Plain HTTP, no
browser; no timing asserted beyond generous limits for "it ended"."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.threads import save_big_message_thread
from tests.support.web import WebServer, authed, wait_for


def test_a_50_mb_thread_is_shown_folded_and_sigterm_ends_the_server(
    web: WebServer, server: FakeLlmServer, project: Path
) -> None:
    thread_id = save_big_message_thread(project)
    with authed(web, origin=web.base) as client:
        client.timeout = 240
        page = client.get(f"/s/{thread_id}")
        assert page.status_code == 200
        assert len(page.content) < 1_000_000 and "49,900,014 more characters" in page.text
        server.add(Turn(text="A summary of the paste.", delay=120))
        started = client.post(f"/api/threads/{thread_id}/resume")
        assert started.status_code == 200, started.text
        session_id = started.json()["id"]
        sent = client.post(f"/api/sessions/{session_id}/messages", json={"text": "and now?"})
        assert sent.status_code == 202, sent.text
        wait_for(lambda: server.requests, timeout=240)  # the paste reached the model
        assert client.get("/api/threads").status_code == 200  # the page still answers
    web.process.send_signal(signal.SIGTERM)
    assert web.process.wait(60) is not None
