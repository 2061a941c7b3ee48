"""`loom run` changes files through the agent's tools; `loom undo` / `loom redo` put them
back exactly, and the person's own git repo never sees a thing."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.config_files import user_config
from tests.support.git import repo_state, tree_state
from tests.support.loom_cli import loom_in_process


def _agent_changes_three_files(server: FakeLlmServer) -> None:
    server.add(
        Turn(
            tool_calls=[
                FakeToolCall(
                    "file_edit",
                    {"path": "app.py", "old_string": "return 1", "new_string": "return 2"},
                ),
                FakeToolCall("file_write", {"path": "notes.txt", "content": "rewritten\n"}),
            ]
        )
    )
    server.add(
        Turn(
            tool_calls=[
                FakeToolCall(
                    "shell",
                    {
                        "command": "mkdir -p out && printf 'made\\n' > out/new.txt"
                        " && chmod -x run.sh"
                    },
                )
            ]
        )
    )
    server.add(Turn(text="Done."))


def test_undo_restores_every_change_exactly_and_redo_reapplies(
    server: FakeLlmServer, project: Path
) -> None:
    before_files = tree_state(project)
    before_repo = repo_state(project)
    _agent_changes_three_files(server)
    done = loom_in_process(["run", "-p", "change things", "--yes", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    thread_id = json.loads(done.stdout)["thread_id"]
    after_files = tree_state(project)
    assert after_files["app.py"][0] == b"def main():\n    return 2\n"
    assert after_files["out/new.txt"][0] == b"made\n"
    assert after_files["run.sh"][1] & 0o111 == 0

    undone = loom_in_process(["undo"], project, server)
    assert undone.returncode == 0, undone.stderr
    assert tree_state(project) == before_files  # bytes and modes; out/ is gone again
    assert not (project / "out").exists()
    for path in ("app.py", "notes.txt", "out/new.txt", "run.sh"):
        assert path in undone.stdout

    redone = loom_in_process(["redo", "--thread", thread_id[:12]], project, server)
    assert redone.returncode == 0, redone.stderr
    assert tree_state(project) == after_files

    assert repo_state(project) == before_repo  # no objects, refs, stash or index change
    thread = json.loads(_thread_file(thread_id).read_text())
    kinds = [record["kind"] for record in thread["checkpoints"]]
    assert kinds[:3] == ["before_tool", "before_tool", "before_tool"]
    assert "turn_end" in kinds and kinds[-2:] == ["undo", "redo"]
    user_id = thread["conversation"]["messages"][0]["id"]
    assert all(r["turn_id"] == user_id for r in thread["checkpoints"] if "turn_id" in r)


def test_undo_refuses_to_clobber_a_hand_edit(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("file_write", {"path": "app.py", "content": "x\n"})]))
    server.add(Turn(text="Done."))
    assert loom_in_process(["run", "-p", "write", "--yes"], project, server).returncode == 0
    (project / "app.py").write_text("my own edit\n")
    refused = loom_in_process(["undo"], project, server)
    assert refused.returncode == 1
    assert "app.py" in refused.stderr and "run `loom undo --force`" in refused.stderr
    assert "confirm" not in refused.stderr  # there is nothing to confirm with, only --force
    assert (project / "app.py").read_text() == "my own edit\n"
    forced = loom_in_process(["undo", "--force"], project, server)
    assert forced.returncode == 0, forced.stderr
    assert (project / "app.py").read_text() == "def main():\n    return 1\n"


def test_a_project_that_is_not_a_git_repo(server: FakeLlmServer, tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (root / "build").mkdir()
    server.add(Turn(tool_calls=[FakeToolCall("file_write", {"path": "b.txt", "content": "b"})]))
    server.add(Turn(text="ok"))
    assert loom_in_process(["run", "-p", "add b", "--yes"], root, server).returncode == 0
    assert (root / "b.txt").exists()
    done = loom_in_process(["undo"], root, server)
    assert done.returncode == 0, done.stderr
    assert not (root / "b.txt").exists() and (root / "a.txt").read_text() == "a\n"
    assert not (root / ".git").exists()


def test_nothing_to_undo_is_a_clear_error(server: FakeLlmServer, project: Path) -> None:
    done = loom_in_process(["undo"], project, server)
    assert done.returncode == 1
    assert "no thread of this project" in done.stderr


def _thread_file(thread_id: str) -> Path:
    import os

    return Path(os.environ["LOOM_HOME"]) / "data" / "threads" / f"{thread_id}.json"


def test_gc_doctor_and_turning_checkpoints_off(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("file_write", {"path": "x.txt", "content": "x"})]))
    server.add(Turn(text="ok"))
    assert loom_in_process(["run", "-p", "write x", "--yes"], project, server).returncode == 0
    doctor = loom_in_process(["doctor"], project, server)
    assert "Checkpoints:" in doctor.stdout and "1 project(s)" in doctor.stdout
    gc = loom_in_process(["checkpoints", "gc", "--keep-days", "0"], project, server)
    assert gc.returncode == 0, gc.stderr
    assert "removed 2 checkpoint(s), kept 0" in gc.stdout
    gone = loom_in_process(["undo"], project, server)
    assert gone.returncode == 1 and "no longer in the store" in gone.stderr
    assert (project / "x.txt").exists()  # nothing was changed

    user_config("[checkpoints]\nenabled = false\n")  # the person's own (a project's waits)
    server.add(Turn(tool_calls=[FakeToolCall("file_write", {"path": "y.txt", "content": "y"})]))
    server.add(Turn(text="ok"))
    done = loom_in_process(["run", "-p", "write y", "--yes", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    thread = json.loads(_thread_file(json.loads(done.stdout)["thread_id"]).read_text())
    assert "checkpoints" not in thread


def test_undo_gives_files_back_their_exact_modes(server: FakeLlmServer, project: Path) -> None:
    # git keeps 644 or 755 only: a 600 secret used to come back world-readable
    (project / "secret.env").write_text("TOKEN=1\n")
    (project / "secret.env").chmod(0o600)
    (project / "shared.cfg").write_text("a = 1\n")
    (project / "shared.cfg").chmod(0o640)
    (project / "tool.sh").write_text("#!/bin/sh\n")
    (project / "tool.sh").chmod(0o750)
    before = tree_state(project)
    command = "rm secret.env && printf 'a = 2\\n' > shared.cfg && printf 'echo\\n' >> tool.sh"
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": command})]), Turn(text="ok"))
    assert loom_in_process(["run", "-p", "change", "--yes"], project, server).returncode == 0
    assert not (project / "secret.env").exists()
    undone = loom_in_process(["undo"], project, server)
    assert undone.returncode == 0, undone.stderr
    assert tree_state(project) == before
    assert (project / "secret.env").stat().st_mode & 0o777 == 0o600


def test_a_folder_replaced_by_a_file_does_not_break_snapshots_or_undo(
    server: FakeLlmServer, project: Path
) -> None:
    (project / "src").mkdir()
    (project / "src" / "a.py").write_text("A = 1\n")
    (project / "src" / "b.py").write_text("B = 2\n")
    before = tree_state(project)
    server.add(
        Turn(tool_calls=[FakeToolCall("shell", {"command": "rm -rf src && echo x > src"})]),
        Turn(tool_calls=[FakeToolCall("file_write", {"path": "later.txt", "content": "l\n"})]),
        Turn(text="ok"),
    )
    done = loom_in_process(["run", "-p", "flatten", "--yes", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    # the snapshot before the second tool call worked: it is an ordinary write
    assert "checkpoint" not in json.loads(done.stdout)["result"].lower()
    assert (project / "src").read_text() == "x\n" and (project / "later.txt").exists()
    undone = loom_in_process(["undo"], project, server)
    assert undone.returncode == 0, undone.stderr
    assert tree_state(project) == before
    redone = loom_in_process(["redo"], project, server)
    assert redone.returncode == 0, redone.stderr
    assert (project / "src").read_text() == "x\n"
    forced = loom_in_process(["undo", "--force"], project, server)
    assert forced.returncode == 0, forced.stderr
    assert tree_state(project) == before


def test_a_folder_replaced_by_a_link_does_not_break_snapshots_or_undo(
    server: FakeLlmServer, project: Path
) -> None:
    (project / "src").mkdir()
    (project / "src" / "a.py").write_text("A = 1\n")
    (project / "elsewhere").mkdir()
    before = tree_state(project)
    server.add(
        Turn(tool_calls=[FakeToolCall("shell", {"command": "rm -rf src && ln -s elsewhere src"})]),
        Turn(tool_calls=[FakeToolCall("file_write", {"path": "later.txt", "content": "l\n"})]),
        Turn(text="ok"),
    )
    done = loom_in_process(["run", "-p", "relink", "--yes", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    assert "checkpoint" not in json.loads(done.stdout)["result"].lower()
    assert (project / "src").is_symlink() and (project / "later.txt").exists()
    undone = loom_in_process(["undo", "--force"], project, server)
    assert undone.returncode == 0, undone.stderr
    assert tree_state(project) == before and not (project / "src").is_symlink()
