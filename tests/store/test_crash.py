"""Crash safety: a child saving a growing thread is SIGKILLed at random moments.

After every kill: the file parses, its version is at least every version whose save
returned (and never goes backwards), `list` shows exactly that thread at that version
(the index never hides it), and no temp file is visible as a thread. The next child
takes over the writer lock the killed one held.
"""

from __future__ import annotations

import json
import os
import random
import signal
import struct
import time

from loom.core.messages import AssistantMessage, UserMessage
from loom.core.thread import Thread
from loom.store import doctor
from loom.store.local import LocalThreadStore

KILLS = 200  # a count, not a time: a loaded machine takes longer, never fewer kills
MAX_MESSAGES = 1500


def _child(thread_id: str, ack_fd: int) -> None:  # runs in the forked child; never returns
    try:
        store = LocalThreadStore()
        store.acquire_writer(thread_id)
        thread = store.load(thread_id)
        assert thread is not None
        rng = random.Random(os.getpid())
        while True:
            if len(thread.messages) < MAX_MESSAGES:
                role = UserMessage if rng.random() < 0.5 else AssistantMessage
                thread.append(role(content=" ".join(rng.choice(WORDS) for _ in range(40))))
            thread.touch()
            store.save(thread)
            os.write(ack_fd, struct.pack("<Q", thread.version))
    finally:
        os._exit(1)


WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "login",
    "error",
    "handler",
    "parser",
    "cache",
    "token",
    "retry",
]


def test_sigkill_during_saves_never_corrupts_or_loses(loom_home) -> None:
    store = LocalThreadStore()
    thread = Thread.new()
    thread.append(UserMessage(content="crash test"))
    thread.touch()
    store.save(thread)
    store.close()
    rng = random.Random(1234)
    acked = seen = thread.version
    kills = 0
    while kills < KILLS:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            _child(thread.id, write_end)
        os.close(write_end)
        time.sleep(rng.uniform(0.002, 0.04))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        kills += 1
        with os.fdopen(read_end, "rb") as acks:
            data = acks.read()
        if len(data) >= 8:
            acked = max(acked, struct.unpack("<Q", data[len(data) // 8 * 8 - 8 :][:8])[0])

        path = store.path_for(thread.id)
        on_disk = Thread.from_json(path.read_bytes())  # parses: never torn
        assert on_disk.version >= acked, "a save that returned was lost"
        assert on_disk.version >= seen, "version went backwards"
        seen = on_disk.version
        json.loads(path.read_bytes())
        names = os.listdir(store.threads_dir)
        assert [n for n in names if n.startswith("T-")] == [path.name]
        assert all(n == path.name or (n.startswith(".") and n.endswith(".tmp")) for n in names)
        reader = LocalThreadStore()
        listed = reader.list()
        assert [(s.id, s.version) for s in listed] == [(thread.id, on_disk.version)]
        reader.close()

    temps = len(os.listdir(store.paths.data / "tmp"))
    print(f"kills={kills} final version={seen} temp files left by kills={temps}")
    assert seen > thread.version + 20  # the children did make progress
    final = LocalThreadStore()
    assert final.search("crash")[0].summary.id == thread.id
    with final.open_for_writing(thread.id):  # the last killed child's lock is recovered
        pass
    repaired = doctor.repair(final.paths)  # leftover temp files of killed saves go
    assert repaired.healthy and repaired.threads == 1
    assert [n for n in os.listdir(final.threads_dir) if n.endswith(".tmp")] == []
    assert os.listdir(final.paths.data / "tmp") == []
