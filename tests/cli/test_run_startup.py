"""What a real `loom run` process does before its first request reaches the model
(issue 25, "Loom's own start-up share"): counted at that moment in the process itself,
never timed. bench/run_startup.py measures the time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.loom_cli import provider_env

# Runs the console entry point (`loom.__main__.main()`, as the `loom` script does) and, at
# the first connection to the model server, prints what start-up has done so far.
PROBE = """
import gc, json, socket, sys
import importlib.metadata as metadata

scans = []
read_all = metadata.entry_points
def counted(**selection):
    scans.append(selection.get("group"))
    return read_all(**selection)
metadata.entry_points = counted

at_start = [generation["collections"] for generation in gc.get_stats()]
connect = socket.socket.connect
def first_connect(self, address):
    if not getattr(first_connect, "seen", False):
        first_connect.seen = True
        now = [generation["collections"] for generation in gc.get_stats()]
        report = {
            "collections": [b - a for a, b in zip(at_start, now)],
            "frozen": gc.get_freeze_count(),
            "collecting": gc.isenabled(),
            "entry_point_scans": scans,
            "sdk_loaded": "openai" in sys.modules,
            "deferred_loaded": sorted(set(DEFERRED) & set(sys.modules)),
        }
        sys.__stderr__.write("PROBE " + json.dumps(report) + "\\n")
    return connect(self, address)
socket.socket.connect = first_connect

# modules only a tool call or a query needs: the shell analysis behind the permission
# policy, the decision graph's readers, the lifecycle hooks (none configured); running
# tool calls, architect plans, sub-agents' footers; and the command framework, which a
# plain `loom run -p TEXT` skips (loom.cli.run.fast)
DEFERRED = [
    "loom.permissions.dangerous", "loom.permissions.shell_rules",
    "loom.permissions.bash_syntax", "loom.permissions.wrappers",
    "loom.decisions.export", "loom.decisions.pulse", "loom.decisions.narrative",
    "loom.decisions.graph", "loom.hooks",
    "loom.session.runtime.tool_runner", "loom.core.plan", "loom.core.family",
    "typer", "click", "loom.cli.app", "loom.cli.run.command",
]

from loom.__main__ import main
main()
"""


def start_up_report(server: FakeLlmServer, project: Path) -> dict:
    env = {**os.environ, **provider_env(server)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "run", "-p", "hi", "--model", "openai:gpt-5"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hi\n"
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("PROBE ")]
    return json.loads(line.removeprefix("PROBE "))


def test_start_up_neither_collects_garbage_nor_rescans_entry_points(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(text="hi"))
    report = start_up_report(server, project)
    assert report["sdk_loaded"]  # the probe saw the real first request
    # the collector paused for the start-up (it made ~200 young and ~20 middle
    # collections and one full one over ~150k long-lived objects), and back on, with
    # start-up's objects frozen, once the session is assembled
    young, middle, full = report["collections"]
    assert full == 0 and middle == 0 and young < 20, report
    assert report["collecting"] and report["frozen"] > 50_000, report
    # one read of the installed entry points (all groups: None) serves Loom's tool,
    # provider and decision node-type groups, which each read all ~120 distributions;
    # pydantic looks for its own plugins once
    loom_scans = [group for group in report["entry_point_scans"] if group != "pydantic"]
    assert loom_scans == [None], report


def test_start_up_loads_neither_the_shell_analysis_nor_the_decision_readers(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(text="hi"))
    report = start_up_report(server, project)
    assert report["sdk_loaded"]  # the probe saw the real first request
    # the permission policy is built, but no command has been judged yet; no decision
    # query has run (their imports: ~5 ms of Loom's ~250 ms before this); no tool call
    # has run; Typer was never imported (~18 ms of CPU with its command building)
    assert report["deferred_loaded"] == [], report
