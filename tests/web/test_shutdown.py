"""Stopping `loom web` while tabs are open (issue 26: every face honours SIGINT and
SIGTERM): it ends, and the person's terminal shows no error for the open event streams
(uvicorn printed "ERROR: ASGI callable returned without completing response" per tab)."""

from __future__ import annotations

import signal
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLlmServer
from tests.support.web import authed, start_web


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_with_open_tabs_ends_the_server_without_an_error(
    project: Path, server: FakeLlmServer, loom_home: Path, signum: int
) -> None:
    web = start_web(project, server, loom_home)
    try:
        with ExitStack() as stack:
            client = stack.enter_context(authed(web))
            streams = [stack.enter_context(client.stream("GET", "/events")) for _ in range(2)]
            assert all(s.status_code == 200 for s in streams)  # both tabs are listening
            web.process.send_signal(signum)
            for stream in streams:  # each ends, closed by the server
                for _ in stream.iter_bytes():
                    pass
        assert web.process.wait(60) in (0, -signum)
    finally:
        if web.process.poll() is None:
            web.process.kill()
    assert web.reader is not None
    web.reader.join(30)  # everything it printed, to its end
    said = "".join(web.output)
    assert "ERROR" not in said and "Traceback" not in said, said
