"""The per-thread writer lock across real processes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest

from loom.store.base import ThreadLocked
from loom.store.local import LocalThreadStore

HOLDER = """
import sys
from loom.store.local import LocalThreadStore
lock = LocalThreadStore().acquire_writer(sys.argv[1])
print("locked", flush=True)
sys.stdin.readline()
lock.release()
print("released", flush=True)
"""

TID = "T-01a20000-0000-7000-8000-000000000001"


def _holder() -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, TID],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "locked"
    return child


def test_second_process_gets_a_clear_error_naming_the_holder() -> None:
    child = _holder()
    try:
        with pytest.raises(ThreadLocked) as err:
            LocalThreadStore().acquire_writer(TID)
        message = str(err.value)
        assert f"pid {child.pid}" in message and socket.gethostname() in message
        assert TID in message
        assert child.stdin is not None
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.stdout is not None and child.stdout.readline().strip() == "released"
    finally:
        child.wait(10)
    with LocalThreadStore().open_for_writing(TID) as lock:
        assert lock.held


def test_lock_of_a_killed_process_is_recovered() -> None:
    child = _holder()
    os.kill(child.pid, signal.SIGKILL)
    child.wait(10)
    store = LocalThreadStore()
    assert (store.paths.locks_dir / f"{TID}.lock").exists()  # left behind by the kill
    lock = store.acquire_writer(TID)
    assert lock.held
    lock.release()
    assert not (store.paths.locks_dir / f"{TID}.lock").exists()


def test_same_process_cannot_open_a_thread_twice() -> None:
    store = LocalThreadStore()
    with store.open_for_writing(TID):
        with pytest.raises(ThreadLocked, match=f"pid {os.getpid()}"):
            store.acquire_writer(TID)
        other = "T-01a20000-0000-7000-8000-000000000002"
        with store.open_for_writing(other) as lock:  # other threads are independent
            assert lock.held
