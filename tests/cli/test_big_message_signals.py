"""A thread holding a 50 MB message, resumed through each face: it reaches the model (or
fails clearly), and SIGINT / SIGTERM are honoured while it is being processed (issue 26:
a 50 MB message resumed never reached the model in 45 s and ignored SIGTERM).

No timing is asserted beyond generous limits for "it ended"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.chat_pty import PROMPT, spawn
from tests.support.loom_cli import provider_env
from tests.support.threads import save_big_message_thread

MODEL = ["--model", "openai:gpt-4o"]


def test_repl_ctrl_c_while_a_big_thread_opens_then_the_model_is_reached(
    server: FakeLlmServer, project: Path
) -> None:
    thread_id = save_big_message_thread(project)
    # the paste is summarised first (it does not fit the context window), then answered
    server.add(Turn(text="A summary of the hex dump."), Turn(text="resumed fine"))
    child = spawn([*MODEL, "resume", thread_id], project, server)
    child.timeout = 240  # a loaded machine opening 50 MB
    child.expect(PROMPT)
    child.sendline("and now?")
    child.expect("starting the session")
    child.send("\x03")  # Ctrl-C: it used to end the REPL without a word
    child.expect("interrupted: the message was not sent")
    child.expect(PROMPT)
    child.sendline("and now?")
    child.expect("resumed fine")
    child.expect(PROMPT)
    assert server.requests[-1].json["input"][-1]["content"] == "and now?"  # Responses API
    child.sendeof()
    child.expect("Thread saved")
    child.expect(pexpect.EOF)


def test_repl_sigterm_while_a_big_thread_is_being_processed_ends_it(
    server: FakeLlmServer, project: Path
) -> None:
    thread_id = save_big_message_thread(project)
    server.add(Turn(text="A summary.", delay=120), Turn(text="never seen"))
    child = spawn([*MODEL, "resume", thread_id], project, server)
    child.timeout = 240
    child.expect(PROMPT)
    child.sendline("and now?")
    child.expect("starting the session")
    child.kill(signal.SIGTERM)
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    assert child.signalstatus == signal.SIGTERM or child.exitstatus not in (None, 0)


def test_run_resuming_a_50_mb_message_reaches_the_model_and_sigterm_ends_it(
    server: FakeLlmServer, project: Path
) -> None:
    thread_id = save_big_message_thread(project)
    server.add(Turn(text="A summary of the hex dump."), Turn(text="resumed fine"))
    command = [sys.executable, "-m", "loom", "run", *MODEL, "-r", thread_id, "-o", "json"]
    environ = {**os.environ, **provider_env(server)}
    done = subprocess.run(
        [*command, "-p", "and now?"], cwd=project, env=environ, capture_output=True,
        text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["result"] == "resumed fine"
    # again, stopped by SIGTERM while the 50 MB is with the model
    server.add(Turn(text="late", delay=120))
    before = len(server.requests)
    process = subprocess.Popen(
        [*command, "-p", "and then?"], cwd=project, env=environ, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while len(server.requests) == before and time.monotonic() < deadline:
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 1 and "stopped by SIGTERM" in err, err[-2000:]
    assert "Traceback" not in err
