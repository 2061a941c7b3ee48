"""Test-wide isolation: every test gets its own LOOM_HOME and never reaches a real model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = [
    "tests.support.fixtures",
    "tests.support.folder_times",
    "tests.support.mcp",
    "tests.support.scheduling",
]

os.environ["LOOM_ALLOW_MODEL_REQUESTS"] = "0"

# pytest-xdist workers start with COLUMNS=80 whatever the terminal: output that fits its
# width (`loom list`'s table) would then differ from a run in one process. A worker gets
# back the COLUMNS its controller had (usually none: not a terminal, 120 columns).
if os.environ.get("PYTEST_XDIST_WORKER") is None:
    os.environ["LOOM_TEST_COLUMNS"] = os.environ.get("COLUMNS", "")
elif os.environ.get("LOOM_TEST_COLUMNS"):
    os.environ["COLUMNS"] = os.environ["LOOM_TEST_COLUMNS"]
else:
    os.environ.pop("COLUMNS", None)
# No wall-clock checks in tests (PROTOCOL.md): Hypothesis neither times examples nor fails
# a test whose inputs are slow to generate when other processes hold the cores.
settings.register_profile("loom", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("loom")

for _key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
    os.environ.pop(_key, None)


@pytest.fixture(autouse=True)
def loom_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("loom-home")
    monkeypatch.setenv("LOOM_HOME", str(home))
    return home


# Not test suites of ours: projects the tests copy and drive (tests/fixtures/sandbox_project
# has its own tests, run inside the sandbox) and the npm tools' node_modules.
collect_ignore = ["fixtures", "npm"]
