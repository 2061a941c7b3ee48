"""The collector paused while a session face starts (loom.startup_gc): back on with the
start-up's objects frozen at the first session, or after the grace time when no session
comes (a `loom web` nobody opened must not run without a collector). Each case runs in
its own interpreter: freezing would otherwise reach into pytest's own objects."""

from __future__ import annotations

import json
import subprocess
import sys

CASE = """
import gc, json, time
from loom import startup_gc
report = {}
startup_gc.pause(grace_s={grace})
report["paused"] = [startup_gc.is_paused(), gc.isenabled()]
{then}
report["after"] = [startup_gc.is_paused(), gc.isenabled(), gc.get_freeze_count() > 0]
print(json.dumps(report))
"""


def run_case(then: str, grace: float = 60.0) -> dict:
    code = CASE.replace("{grace}", str(grace)).replace("{then}", then)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    return json.loads(done.stdout)


def test_resume_turns_collection_back_on_with_start_ups_objects_frozen() -> None:
    report = run_case("startup_gc.resume(); startup_gc.resume()")
    assert report == {"paused": [True, False], "after": [False, True, True]}


def test_without_a_session_the_grace_time_turns_it_back_on() -> None:
    report = run_case(
        "deadline = time.monotonic() + 30\n"
        "while startup_gc.is_paused() and time.monotonic() < deadline: time.sleep(0.01)",
        grace=0.05,
    )
    assert report["after"] == [False, True, True]


def test_the_first_session_of_a_workspace_resumes_it(tmp_path) -> None:
    then = f"""
import asyncio
from pathlib import Path
from loom.config import load_config
from loom.llm.scripted import ScriptedProvider
from loom.session import SessionSpec, Workspace

async def start():
    project = Path({str(tmp_path)!r})
    ws = Workspace(load_config(project), provider_factory=lambda m: ScriptedProvider(["hi"]))
    try:
        await ws.start_session(SessionSpec(model="openai:x", auto_approve=True))
    finally:
        await ws.shutdown()

asyncio.run(start())
"""
    report = run_case(then)
    assert report["after"] == [False, True, True]
