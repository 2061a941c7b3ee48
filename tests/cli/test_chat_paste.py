"""A paste that reaches the REPL key by key (a terminal without bracketed paste, `tmux
send-keys`): prompt_toolkit inserted each character into a new copy of the line, so
100 KB took minutes and gigabytes, with Ctrl-C waiting behind it (issue 26). Linux: the
REPL's peak memory is read from /proc."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

import pexpect
import pytest
from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.chat_pty import PROMPT, saved_thread, spawn


def test_a_100_kb_paste_typed_key_by_key_reaches_the_model(
    server: FakeLlmServer, project: Path
) -> None:
    blob = "what is this? " + os.urandom(50_000).hex()
    server.add(Turn(text="That is hex."))
    child = spawn(["--private"], project, server)
    child.expect(PROMPT)
    # typed from another thread while this one reads the echo: the REPL must never wait
    # on a full terminal while the sender waits on a full input queue
    typist = threading.Thread(target=child.send, args=(blob,))  # no bracketed-paste marks
    typist.start()
    deadline = (
        time.monotonic() + 120
    )  # a generous bound for "it keeps up"; without the fix: minutes
    while typist.is_alive():
        if time.monotonic() > deadline:
            child.terminate(force=True)
            pytest.fail("the REPL did not take a 100 KB paste in")
        with contextlib.suppress(pexpect.TIMEOUT):
            child.read_nonblocking(1 << 20, timeout=0.1)
    typist.join()
    child.send("\r")
    child.expect("That is hex.", timeout=120)  # without the fix: minutes
    child.expect(PROMPT)
    status = Path(f"/proc/{child.pid}/status").read_text()
    peak_kb = int(status.split("VmHWM:")[1].split()[0])
    assert peak_kb < 1_000_000  # ~250 MB; a copy of the line per key: 5 GB
    (request,) = server.requests
    assert request.json["messages"][-1]["content"][0]["text"] == blob
    child.sendeof()
    saved_thread(child)
