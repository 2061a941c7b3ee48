"""A read-only or full data directory: a clear error, and the previous file intact."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.threads import make_thread

from loom.core.messages import UserMessage
from loom.store import atomic
from loom.store.atomic import StorageError
from loom.store.local import LocalThreadStore


def _no_temp_files(directory: Path) -> bool:
    return not [p for p in directory.iterdir() if p.name.endswith(".tmp")]


def test_disk_full_midway_keeps_the_previous_file(monkeypatch: pytest.MonkeyPatch) -> None:
    store = LocalThreadStore()
    thread = make_thread()
    store.save(thread)
    before = store.path_for(thread.id).read_bytes()
    real_write = os.write
    calls = {"n": 0}

    def write_then_fill_up(fd: int, data: bytes | memoryview) -> int:
        calls["n"] += 1
        if calls["n"] > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, bytes(data[:10]))  # a short write first, then the disk is full

    monkeypatch.setattr(atomic.os, "write", write_then_fill_up)
    monkeypatch.setattr(atomic.os, "writev", lambda fd, parts: write_then_fill_up(fd, parts[0]))
    thread.append(UserMessage(content="a message that will not fit"))
    thread.touch()
    with pytest.raises(StorageError, match=r"disk is full.*previous copy is intact"):
        store.save(thread)
    monkeypatch.undo()
    assert store.path_for(thread.id).read_bytes() == before
    assert _no_temp_files(store.threads_dir)
    assert store.list()[0].version == thread.version - 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_chmod_read_only_folder() -> None:
    store = LocalThreadStore()
    thread = make_thread()
    store.save(thread)
    before = store.path_for(thread.id).read_bytes()
    store.threads_dir.chmod(0o555)
    try:
        thread.touch()
        with pytest.raises(StorageError, match="not writable"):
            store.save(thread)
    finally:
        store.threads_dir.chmod(0o755)
    assert store.path_for(thread.id).read_bytes() == before


CHILD = """
import sys
from loom.store.local import LocalThreadStore
from loom.store.atomic import StorageError
from loom.core.messages import UserMessage
store = LocalThreadStore()
thread = store.load(sys.argv[1])
thread.append(UserMessage(content="x" * int(sys.argv[2])))
thread.touch()
try:
    store.save(thread)
except StorageError as exc:
    print(exc.strerror)
    sys.exit(3)
print("saved")
"""


def _in_mount_namespace(setup: str, thread_id: str, size: int) -> subprocess.CompletedProcess[str]:
    """Run the CHILD save inside a private mount namespace prepared by `setup`."""
    script = f'{setup} && exec "{sys.executable}" -c "$CHILD" {thread_id} {size}'
    return subprocess.run(
        ["unshare", "-m", "sh", "-ec", script],
        capture_output=True,
        text=True,
        env={**os.environ, "CHILD": CHILD},
        timeout=60,
    )


def _namespaces_work(tmp_path: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {tmp_path}"],
        capture_output=True,
    )
    return probe.returncode == 0


def test_real_read_only_mount(tmp_path: Path) -> None:
    if not _namespaces_work(tmp_path):
        pytest.skip("cannot create a mount namespace here")
    store = LocalThreadStore()
    thread = make_thread()
    store.save(thread)
    before = store.path_for(thread.id).read_bytes()
    d = store.threads_dir
    setup = f"mount --bind {d} {d} && mount -o remount,bind,ro {d}"
    done = _in_mount_namespace(setup, thread.id, 10)
    assert done.returncode == 3, done.stderr
    assert "is not writable" in done.stdout and "previous copy is intact" in done.stdout
    assert store.path_for(thread.id).read_bytes() == before


VERIFY = """
import os, sys
from loom.store.local import LocalThreadStore
store = LocalThreadStore()
thread = store.load(sys.argv[1])
temps = [n for n in os.listdir(store.threads_dir) if n.endswith(".tmp")]
print(f"version={thread.version} messages={len(thread.messages)} temps={len(temps)}")
"""


def test_real_full_filesystem(tmp_path: Path) -> None:
    if not _namespaces_work(tmp_path):
        pytest.skip("cannot create a mount namespace here")
    store = LocalThreadStore()
    thread = make_thread()
    store.save(thread)
    d = store.threads_dir
    py = sys.executable
    # A 256 KiB tmpfs over the threads folder holding a copy of the file: one small save
    # fits, the next (400 KB) does not.
    script = (
        f"cp {d}/{thread.id}.json /tmp/.loom-copy-$$ && mount -t tmpfs -o size=256k tmpfs {d}"
        f" && mv /tmp/.loom-copy-$$ {d}/{thread.id}.json"
        f' && "{py}" -c "$CHILD" {thread.id} 1000'
        f' && ("{py}" -c "$CHILD" {thread.id} 400000 || echo "exit=$?")'
        f' && "{py}" -c "$VERIFY" {thread.id}'
    )
    done = subprocess.run(
        ["unshare", "-m", "sh", "-ec", script],
        capture_output=True,
        text=True,
        env={**os.environ, "CHILD": CHILD, "VERIFY": VERIFY},
        timeout=60,
    )
    out = done.stdout
    assert "saved" in out and "exit=3" in out, (out, done.stderr)
    assert "disk is full" in out and "previous copy is intact" in out
    # The small save is the file's content; the failed one left nothing behind.
    assert f"version={thread.version + 1} messages={len(thread.messages) + 1} temps=0" in out
