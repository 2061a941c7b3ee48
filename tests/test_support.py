"""The test suite's own machinery (tests/support): running `loom` in this process gives
back the process-wide state it found, and the per-folder timing names folders right."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from tests.support.folder_times import folder_of
from tests.support.loom_cli import loom, loom_in_process, no_thread_left, process_state_kept


def test_in_process_and_subprocess_give_the_same_answer(tmp_path: Path) -> None:
    here = loom_in_process(["--version"], tmp_path, None)
    there = loom(["--version"], tmp_path, None)
    assert (here.returncode, here.stdout, here.stderr) == (0, there.stdout, there.stderr)
    bad = loom_in_process(["no-such-command"], tmp_path, None)
    assert bad.returncode == 2 and "no-such-command" in bad.stderr


def test_what_a_command_changes_process_wide_is_put_back(tmp_path: Path) -> None:
    before = (os.getcwd(), dict(os.environ), signal.getsignal(signal.SIGINT))
    with process_state_kept(tmp_path):
        assert Path.cwd() == tmp_path.resolve()
        os.environ["LOOM_LEFT_BEHIND"] = "1"
        os.environ.pop("LOOM_HOME")
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        os.chdir("/")
    assert (os.getcwd(), dict(os.environ), signal.getsignal(signal.SIGINT)) == before


def test_a_thread_left_running_fails_the_test() -> None:
    before = set(threading.enumerate())
    stop = threading.Event()
    lingering = threading.Thread(target=stop.wait, name="lingering", daemon=False)
    lingering.start()
    try:
        with pytest.raises(AssertionError, match="lingering"):
            no_thread_left(before, wait=0.1)
    finally:
        stop.set()
        lingering.join()
    quick = threading.Thread(target=time.sleep, args=(0.05,), daemon=False)
    quick.start()
    no_thread_left(before, wait=5)  # one that ends on its own is waited for


@pytest.mark.parametrize(
    ("nodeid", "folder"),
    [
        ("tests/cli/test_run.py::test_max_turns[1]", "cli"),
        ("tests/web/test_chat.py::test_x@browser", "web"),
        ("tests/test_config.py::test_x", "test_config.py"),
    ],
)
def test_folder_of(nodeid: str, folder: str) -> None:
    assert folder_of(nodeid) == folder


def test_test_modules_take_shared_helpers_only_from_support_and_fakes() -> None:
    """A helper two test files share lives in tests/support (or tests/fakes): a test
    module importing another test folder's module couples their order and fixtures."""
    import ast

    tests = Path(__file__).parent
    wrong = []
    for path in sorted(tests.rglob("*.py")):
        if "node_modules" in path.parts or path.parts[len(tests.parts)] in ("support", "fakes"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] == "tests" and len(parts) > 1 and parts[1] not in ("support", "fakes"):
                    wrong.append(f"{path.relative_to(tests)}:{node.lineno} imports {name}")
    assert not wrong, "move the helper to tests/support:\n" + "\n".join(wrong)
