"""Issue 20, route 8: `[sandbox] max_processes / max_memory_mb / max_file_mb` stop a fork
bomb, a runaway allocation and a huge file, for root too (these tests run as whatever
user runs them; as root RLIMIT_NPROC alone would not hold: the cgroup does, or without
one the watcher of `loom.sandbox.process_watch`). Real
`loom run --yes` and bubblewrap."""

from __future__ import annotations

import os

import pytest

from tests.fakes.llm_server import FakeLlmServer
from tests.support.sandbox import Layout, run_command

LIMITS = "[sandbox]\nmax_processes = 40\nmax_memory_mb = 200\nmax_file_mb = 50\n"

FORK_BOMB = """
import os, time
made = 0
try:
    while made < 1000:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        made += 1
    print("made", made)
except OSError as exc:
    print("stopped after", made, exc)
"""


@pytest.fixture
def limited(layout: Layout) -> Layout:
    config = layout.loom_home / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(LIMITS)
    return layout


def test_a_fork_bomb_is_stopped(server: FakeLlmServer, limited: Layout) -> None:
    (limited.project / "bomb.py").write_text(FORK_BOMB)
    result = run_command(server, limited, "python3 bomb.py")
    assert "stopped after" in result["content"], result["content"]
    made = int(result["content"].split("stopped after", 1)[1].split()[0])
    assert made < 40


def test_as_root_without_a_cgroup_a_fork_bomb_is_still_stopped(
    server: FakeLlmServer, limited: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Root in a container whose cgroups Loom may not write: RLIMIT_NPROC never holds
    root, so the watcher inside the sandbox stops the command (issue 20, route 8)."""
    if os.geteuid() != 0:
        pytest.skip("RLIMIT_NPROC holds a user who is not root")
    import loom.sandbox.backend

    monkeypatch.setattr(loom.sandbox.backend, "make_group", lambda limits: None)
    # Bounded on purpose: 120 sleepers cross the cap of 40 as a bomb does, but nothing
    # here can exhaust the machine if the watcher is slow (a real exponential bomb, as
    # root with no cgroup, outran a 5 ms poll on a loaded CI machine and starved every
    # other test of processes).
    fan_out = "for i in $(seq 120); do sleep 20 & done\nwait\necho survived\n"
    (limited.project / "many.sh").write_text(fan_out)
    result = run_command(server, limited, "bash many.sh")
    assert result.get("is_error") is True
    assert "more than 40 processes" in result["content"], result["content"]
    assert "survived" not in result["content"]


def test_a_file_past_the_limit_is_cut_short(server: FakeLlmServer, limited: Layout) -> None:
    result = run_command(server, limited, "head -c 120M /dev/zero > big.bin")
    assert result.get("is_error") is True
    assert "File size limit exceeded" in result["content"]
    assert "caps each file at 50 MB" in result["content"]
    assert (limited.project / "big.bin").stat().st_size <= 50 * 1024 * 1024


def test_memory_is_capped(server: FakeLlmServer, limited: Layout) -> None:
    script = "b = bytearray(600 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); print('got it')"
    (limited.project / "eat.py").write_text(script)
    result = run_command(server, limited, "python3 eat.py")
    assert result.get("is_error") is True
    assert "got it" not in result["content"]


def test_ordinary_work_is_not_limited(server: FakeLlmServer, layout: Layout) -> None:
    """The defaults leave room for a parallel build."""
    result = run_command(
        server,
        layout,
        "for i in $(seq 64); do sleep 0.2 & done; wait; head -c 60M /dev/zero > f.bin; "
        "python3 -c 'b = bytearray(300 * 1024 * 1024); print(len(b))'",
    )
    assert not result.get("is_error"), result["content"]
    assert (layout.project / "f.bin").stat().st_size == 60 * 1024 * 1024
