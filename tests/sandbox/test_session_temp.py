"""Each session's sandboxed commands get a temp folder of their own, bound at /tmp and
named in $TMPDIR: the machine's shared /tmp (and other projects' folders in it) is out of
reach, the session's commands (and its sub-agents') share theirs, other sessions never
see it, and it goes when the session ends (or at the next start, for a Loom that died).
Real bubblewrap through `loom run`; the fake model scripts the commands."""

from __future__ import annotations

import fcntl
import os
import sys
import threading
import time
import uuid
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import loom, loom_in_process, loom_popen
from tests.support.sandbox import Layout, run_command


def _session_temps(systmp: Path) -> list[Path]:
    return sorted(systmp.glob("loom-tmp-*"))


def _shell(command: str) -> FakeToolCall:
    return FakeToolCall("shell", {"command": command})


def _results(server: FakeLlmServer) -> list[str]:
    found: list[str] = []
    for request in server.requests:
        for message in request.json.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result" and block["content"] not in found:
                    found.append(block["content"])
    return found


def test_a_command_cannot_write_the_shared_tmp_nor_another_projects_folder_there(
    server: FakeLlmServer, layout: Layout
) -> None:
    other = layout.systmp / "other-project"  # another project's virtualenv in /tmp
    (other / ".venv" / "bin").mkdir(parents=True)
    python = other / ".venv" / "bin" / "python"
    python.write_text("#!/bin/sh\necho real python\n")
    marker = f"loom-marker-{uuid.uuid4().hex}"
    command = (
        f"echo pwned > {python}; echo pwned >> {other}/.venv/bin/activate; "
        f"mkdir -p {other}/src && echo pwned > {other}/src/planted.py; "
        f"echo x > {layout.systmp}/{marker}; echo x > /tmp/{marker}; echo x > /var/tmp/{marker}; "
        f"ln -s {python} /tmp/link && echo pwned > /tmp/link; "
        'echo "TMPDIR=$TMPDIR"; ls -A /tmp'
    )
    result = run_command(server, layout, command)
    assert python.read_text() == "#!/bin/sh\necho real python\n"
    assert sorted(p.name for p in other.rglob("*")) == [".venv", "bin", "python"]
    assert not (layout.systmp / marker).exists()
    assert not Path("/tmp", marker).exists() and not Path("/var/tmp", marker).exists()
    # its own /tmp: what it wrote there is in it, and nothing of the machine's
    listing = result["content"].split("TMPDIR=/tmp\n", 1)[1]
    assert marker in listing and "other-project" not in listing
    assert _session_temps(layout.systmp) == []  # removed when the run ended


def test_commands_of_one_session_share_its_temp_folder_which_goes_with_it(
    server: FakeLlmServer, layout: Layout
) -> None:
    server.add(
        Turn(tool_calls=[_shell('echo one > /tmp/shared.txt; echo "$(mktemp)"; stat -c %a /tmp')]),
        Turn(tool_calls=[_shell("cat /tmp/shared.txt; cat $TMPDIR/shared.txt")]),
        Turn(tool_calls=[FakeToolCall("git", {"subcommand": "status"})]),
        Turn(text="done"),
    )  # fmt: skip
    seen: set[tuple[Path, ...]] = set()
    running = threading.Event()
    running.set()

    def watch() -> None:
        while running.is_set():
            seen.add(tuple(_session_temps(layout.systmp)))
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        done = loom_in_process(["run", "-p", "go", "--yes"], layout.project, server,
                               TMPDIR=str(layout.systmp))  # fmt: skip
    finally:
        running.clear()
        watcher.join()
    assert done.returncode == 0, done.stderr
    first, second, _git = _results(server)
    assert first.startswith("/tmp/tmp.") and "\n700\n" in first  # private: mode 0700
    assert second == "one\none\n[exit code 0]"
    # one folder, in the system temp folder, for the whole session; gone after it
    folders = {path for paths in seen for path in paths}
    assert len(folders) == 1
    assert _session_temps(layout.systmp) == []


def test_another_sessions_temp_folder_is_out_of_sight(
    server: FakeLlmServer, layout: Layout, tmp_path: Path
) -> None:
    other = tmp_path / "proj-b"
    other.mkdir()
    go = layout.project / "go"
    server.for_first_message(
        "session A",
        Turn(tool_calls=[_shell(
            f"echo secret-of-a > /tmp/a-secret.txt; while [ ! -e {go} ]; do sleep 0.1; done"
        )]),
        Turn(text="a done"),
    )  # fmt: skip
    server.for_first_message(
        "session B",
        Turn(tool_calls=[_shell(
            "cat /tmp/a-secret.txt; ls -A /tmp; "
            "find /tmp /var/tmp -name 'a-secret*' 2>/dev/null; echo end"
        )]),
        Turn(text="b done"),
    )  # fmt: skip
    session_a = loom_popen(["run", "-p", "session A", "--yes"], layout.project, server,
                           TMPDIR=str(layout.systmp))  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not list(layout.systmp.glob("loom-tmp-*/a-secret.txt")):
            assert session_a.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        done = loom_in_process(["run", "-p", "session B", "--yes"], other, server,
                               TMPDIR=str(layout.systmp))  # fmt: skip
        assert done.returncode == 0, done.stderr
    finally:
        go.touch()
        _out, err = session_a.communicate(timeout=60)
    assert session_a.returncode == 0, err
    seen_by_b = next(r for r in _results(server) if r.endswith("end\n[exit code 0]"))
    assert "secret-of-a" not in seen_by_b and "a-secret" not in seen_by_b.split("\n", 1)[1]
    assert "No such file or directory" in seen_by_b
    assert _session_temps(layout.systmp) == []


def test_a_subagent_shares_its_parents_temp_folder(server: FakeLlmServer, layout: Layout) -> None:
    brief = "Read the parent's note"
    server.add(
        Turn(tool_calls=[_shell("echo from-parent > /tmp/note.txt")]),
        Turn(tool_calls=[FakeToolCall("task", {"description": "read", "prompt": brief})]),
        Turn(text="done"),
    )
    server.for_first_message(brief, Turn(tool_calls=[_shell("cat /tmp/note.txt")]),
                             Turn(text="read it"))  # fmt: skip
    done = loom_in_process(["run", "-p", "go", "--yes"], layout.project, server,
                           TMPDIR=str(layout.systmp))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "from-parent\n[exit code 0]" in _results(server)
    assert _session_temps(layout.systmp) == []


def test_common_tools_work_with_the_private_temp(server: FakeLlmServer, layout: Layout) -> None:
    (layout.project / "test_tmp.py").write_text(
        "def test_tmp_path(tmp_path):\n"
        "    (tmp_path / 'f').write_text('x')\n"
        "    assert str(tmp_path).startswith('/tmp/')\n"
    )
    command = (
        f"{sys.executable} -m pytest -q -p no:cacheprovider test_tmp.py && "
        f"{sys.executable} -c 'import tempfile; print(tempfile.gettempdir())' && "
        "d=$(mktemp -d) && git init -q $d/repo && git -C $d/repo commit -q --allow-empty "
        "-m t --author 'T <t@e.x>' && git -C $d/repo log --format=%s && "
        f"{sys.executable} -m pip --version >/dev/null && echo pip-ok"
    )
    result = run_command(server, layout, command, GIT_COMMITTER_NAME="T",
                         GIT_COMMITTER_EMAIL="t@e.x")  # fmt: skip
    assert not result.get("is_error"), result["content"]
    assert "1 passed" in result["content"]
    assert result["content"].endswith("/tmp\nt\npip-ok\n[exit code 0]")


def test_folders_of_looms_that_are_gone_are_swept_at_the_next_start(
    server: FakeLlmServer, layout: Layout
) -> None:
    dead = layout.systmp / "loom-tmp-deadbeef"
    (dead / "sub").mkdir(parents=True)
    (dead / "sub" / "left.txt").write_text("left over\n")
    (dead / "sub").chmod(0o500)  # a command made it read-only
    live = layout.systmp / "loom-tmp-stillrunning"
    live.mkdir()
    young = layout.systmp / "loom-tmp-juststarted"  # its Loom may not hold it yet
    young.mkdir()
    not_ours = layout.systmp / "loom-tmpfile"
    not_ours.write_text("keep\n")
    an_hour_ago = time.time() - 3600
    for folder in (dead, live):
        os.utime(folder, (an_hour_ago, an_hour_ago))
    held = os.open(live, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running Loom holds it
    try:
        server.add(Turn(text="hello"))
        done = loom(["run", "-p", "hi"], layout.project, server, TMPDIR=str(layout.systmp))
        assert done.returncode == 0, done.stderr
    finally:
        os.close(held)
    assert not dead.exists()
    assert live.is_dir() and young.is_dir() and not_ours.read_text() == "keep\n"
    assert sorted(_session_temps(layout.systmp)) == sorted([live, young])


def test_a_symlink_planted_on_the_projects_path_in_tmp_never_steers_the_next_mounts(
    server: FakeLlmServer, layout: Layout
) -> None:
    # The project lies under /tmp, so its mount point and the folders above it are made
    # in the session's temp folder, which commands write: swapping one for a symlink
    # into the host (bwrap sets up mounts with the host's root at /oldroot) would make
    # the next command's bubblewrap create folders there.
    chain = [layout.project, *layout.project.parents]
    chain = [p for p in chain if Path("/tmp") in p.parents]
    swaps = "; ".join(
        f"mv {p} {p}.moved; rm -rf {p}; ln -s /oldroot{layout.outside} {p}" for p in chain
    )
    server.add(
        Turn(tool_calls=[_shell(f"cd /; {swaps}; ls -la {layout.project.parent}")]),
        Turn(tool_calls=[_shell("pwd; echo second > second.txt")]),
        Turn(text="done"),
    )
    done = loom_in_process(["run", "-p", "go", "--yes"], layout.project, server,
                           TMPDIR=str(layout.systmp))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in layout.outside.iterdir()) == ["keep.txt"]
    first, second = _results(server)
    assert "Device or resource busy" in first
    assert second == f"{layout.project}\n[exit code 0]"
    assert (layout.project / "second.txt").read_text() == "second\n"
