"""`loom run --yes` with shell commands scripted by the fake LLM: the real kernel confines
them (bubblewrap here). No mocks: every command starts its sandbox for real (Loom itself
runs in this process, but where no sandbox can start, where it is a subprocess)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import loom_in_process, provider_env
from tests.support.sandbox import Layout, last_tool_result, run_command

FIXTURE_PROJECT = Path(__file__).resolve().parents[1] / "fixtures" / "sandbox_project"


def test_write_outside_the_project_fails_and_leaves_the_file(
    server: FakeLlmServer, layout: Layout
) -> None:
    result = run_command(server, layout, f"echo changed > {layout.outside}/keep.txt")
    assert (layout.outside / "keep.txt").read_text() == "original\n"
    assert result.get("is_error") is True
    # `outside` lies in the shared /tmp, which the sandbox does not even show
    assert "No such file or directory" in result["content"]
    # the model is told plainly why, and how the person can allow it
    assert (
        f"[sandbox: {layout.outside}/keep.txt is in the machine's shared temp" in result["content"]
    )
    assert "[sandbox] writable" in result["content"]
    # a place outside /tmp: read-only
    refused = run_command(server, layout, "echo changed > /etc/loom-test-marker")
    assert "Read-only file system" in refused["content"]
    assert "[sandbox: the sandbox refused a write outside" in refused["content"]
    assert not Path("/etc/loom-test-marker").exists()


def test_rm_rf_of_an_outside_folder_fails(server: FakeLlmServer, layout: Layout) -> None:
    victim = layout.outside / "important"
    (victim / "sub").mkdir(parents=True)
    (victim / "sub" / "data.txt").write_text("precious\n")
    run_command(server, layout, f"rm -rf {victim}")  # out of view: nothing to remove
    assert (victim / "sub" / "data.txt").read_text() == "precious\n"


def test_writing_inside_the_project_and_temp_works(server: FakeLlmServer, layout: Layout) -> None:
    result = run_command(
        server, layout, 'echo hello > made.txt && f=$(mktemp) && echo t > "$f" && cat made.txt'
    )
    assert not result.get("is_error"), result["content"]
    assert (layout.project / "made.txt").read_text() == "hello\n"
    assert result["content"] == "hello\n[exit code 0]"


def test_network_is_off_by_default_and_on_when_configured(
    server: FakeLlmServer, layout: Layout
) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        connect = (
            f'{sys.executable} -c "import socket; '
            f"socket.create_connection(('127.0.0.1', {port}), timeout=5); print('connected')\""
        )
        off = run_command(server, layout, connect)
        assert off.get("is_error") is True and "connected" not in off["content"]
        assert "ConnectionRefusedError" in off["content"]
        assert "network access is off in the sandbox" in off["content"]

        config = layout.loom_home / "config" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text("[sandbox]\nnetwork = true\n")
        on = run_command(server, layout, connect)
        assert not on.get("is_error"), on["content"]
        assert on["content"] == "connected\n[exit code 0]"
        # the rest of the sandbox still holds with the network on
        still = run_command(server, layout, f"echo x > {layout.outside}/keep.txt")
        assert still.get("is_error") is True
        assert (layout.outside / "keep.txt").read_text() == "original\n"


def test_a_symlink_inside_pointing_outside_cannot_be_written_through(
    server: FakeLlmServer, layout: Layout
) -> None:
    (layout.project / "link.txt").symlink_to(layout.outside / "keep.txt")
    (layout.project / "linkdir").symlink_to(layout.outside, target_is_directory=True)
    result = run_command(
        server, layout, "echo x > link.txt; echo y >> link.txt; touch linkdir/new.txt"
    )
    assert (layout.outside / "keep.txt").read_text() == "original\n"
    assert not (layout.outside / "new.txt").exists()
    assert result.get("is_error") is True


def test_cd_up_then_write_fails(server: FakeLlmServer, layout: Layout) -> None:
    result = run_command(server, layout, "cd .. && echo x > escaped.txt && cd / && touch x")
    assert not (layout.project.parent / "escaped.txt").exists()  # (the session's own /tmp)
    assert result.get("is_error") is True and "Read-only file system" in result["content"]


def test_environment_variables_cannot_lift_it(server: FakeLlmServer, layout: Layout) -> None:
    target = layout.outside / "keep.txt"
    command = (
        f"export TMPDIR={layout.outside} HOME={layout.outside} LOOM_SANDBOX=off; "
        f'echo x > "$TMPDIR/from-tmpdir.txt"; echo x > {target}; '
        f"env -i PATH=/usr/bin:/bin sh -c 'echo x > {target}'"
    )
    # Loom itself started with variables that look like switches: there are none
    result = run_command(
        server,
        layout,
        command,
        LOOM_SANDBOX="off",
        LOOM_SANDBOX_MODE="off",
        LOOM_NO_SANDBOX="1",
    )
    assert target.read_text() == "original\n"
    assert not (layout.outside / "from-tmpdir.txt").exists()
    assert result.get("is_error") is True


@pytest.mark.skipif(os.geteuid() != 0, reason="root-only escape attempts")
def test_root_cannot_remount_or_unshare_its_way_out(server: FakeLlmServer, layout: Layout) -> None:
    target = layout.outside / "keep.txt"
    command = (
        f"mount -o remount,bind,rw / ; mount -o remount,bind,rw {layout.outside} ; "
        f"mount -t tmpfs none {layout.outside} ; "
        f"unshare -Urm sh -c 'mount -o remount,bind,rw / ; echo x > {target}' ; "
        f"chmod 777 {target} ; chown nobody {target} ; echo x > {target}"
    )
    result = run_command(server, layout, command)
    assert target.read_text() == "original\n"
    assert oct(target.stat().st_mode & 0o777) == oct(0o644)
    assert target.stat().st_uid == 0
    assert result.get("is_error") is True


def test_exit_code_stdout_and_stderr_reach_the_model_unchanged(
    server: FakeLlmServer, layout: Layout
) -> None:
    command = "printf 'out line\\n'; printf 'err line\\n' >&2; printf 'tail'; exit 7"
    sandboxed = run_command(server, layout, command)
    unconfined = run_command(server, layout, command, "--no-sandbox")
    assert sandboxed["content"] == "out line\nerr line\ntail\n[exit code 7]"
    assert sandboxed == {**unconfined, "tool_use_id": sandboxed["tool_use_id"]}


def test_the_fixture_projects_own_test_suite_passes_inside(
    server: FakeLlmServer, layout: Layout
) -> None:
    shutil.copytree(FIXTURE_PROJECT, layout.project, dirs_exist_ok=True)
    result = run_command(server, layout, f"{sys.executable} -m pytest -q tests")
    assert not result.get("is_error"), result["content"]
    assert "5 passed" in result["content"]
    assert (layout.project / "build" / "out.txt").read_text() == "built\n"


def test_git_commands_the_agent_asks_for_run_sandboxed(
    server: FakeLlmServer, layout: Layout
) -> None:
    (layout.project / "a.txt").write_text("a\n")
    server.add(Turn(tool_calls=[FakeToolCall("git", {"subcommand": "add", "args": ["a.txt"]})]))
    server.add(
        Turn(
            tool_calls=[
                FakeToolCall(
                    "git",
                    {"subcommand": "commit", "args": ["-m", "add a", "--author", "T <t@e.x>"]},
                )
            ]
        )
    )
    server.add(Turn(text="committed"))
    done = loom_in_process(
        ["run", "-p", "commit", "--yes"],
        layout.project,
        server,
        TMPDIR=str(layout.systmp),
        GIT_COMMITTER_NAME="T",
        GIT_COMMITTER_EMAIL="t@e.x",
    )
    assert done.returncode == 0, done.stderr
    assert "add a" in last_tool_result(server)["content"]
    # git's own hooks stay read-only: a hook planted now would run unsandboxed later
    hook = layout.project / ".git" / "hooks" / "pre-commit"
    result = run_command(server, layout, f"echo 'touch {layout.outside}/pwned' > {hook}")
    assert result.get("is_error") is True and not hook.exists()


def test_ask_mode_refuses_shell_under_yes_and_no_sandbox_runs_it(
    server: FakeLlmServer, layout: Layout
) -> None:
    config = layout.loom_home / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[sandbox]\nmode = "ask"\n')
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": "echo hi > asked.txt"})]))
    server.add(Turn(text="refused"))
    done = loom_in_process(
        ["run", "-p", "go", "--yes"], layout.project, server, TMPDIR=str(layout.systmp)
    )
    assert done.returncode == 0, done.stderr
    assert not (layout.project / "asked.txt").exists()
    assert "refused shell" in done.stderr and "--no-sandbox" in done.stderr
    assert 'mode is "ask"' in done.stderr  # the notice, once
    assert done.stderr.count("mode is") == 1

    outside_write = f"echo unconfined > {layout.outside}/free.txt"
    result = run_command(server, layout, outside_write, "--no-sandbox")
    assert not result.get("is_error")
    assert (layout.outside / "free.txt").read_text() == "unconfined\n"


def test_a_project_file_cannot_loosen_its_own_sandbox(
    server: FakeLlmServer, layout: Layout
) -> None:
    (layout.project / ".loom.toml").write_text(
        f'[sandbox]\nmode = "off"\nnetwork = true\nwritable = ["{layout.outside}"]\n'
    )
    result = run_command(server, layout, f"echo x > {layout.outside}/keep.txt; echo y > .loom.toml")
    assert (layout.outside / "keep.txt").read_text() == "original\n"
    assert "mode" in (layout.project / ".loom.toml").read_text()  # read-only in the sandbox
    assert result.get("is_error") is True


def test_the_repl_runs_approved_commands_sandboxed_unless_no_sandbox(
    server: FakeLlmServer, layout: Layout
) -> None:
    write_outside = f"echo from-repl > {layout.outside}/repl.txt"
    for _ in range(2):
        server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": write_outside})]))
        server.add(Turn(text="tried"))
    # piped stdin: a line for the message, then "y" answers the permission prompt
    sandboxed = loom_in_process(
        [], layout.project, server, "write it\ny\n", TMPDIR=str(layout.systmp)
    )
    assert sandboxed.returncode == 0, sandboxed.stderr
    assert not (layout.outside / "repl.txt").exists()
    assert "sandbox is off" not in sandboxed.stdout + sandboxed.stderr

    unconfined = loom_in_process(
        ["--no-sandbox"], layout.project, server, "write it\ny\n", TMPDIR=str(layout.systmp)
    )
    assert unconfined.returncode == 0, unconfined.stderr
    assert "the sandbox is off" in unconfined.stdout + unconfined.stderr  # the REPL's header
    assert (layout.outside / "repl.txt").read_text() == "from-repl\n"


def test_one_command_gets_the_network_when_a_person_approves_it(
    server: FakeLlmServer, layout: Layout
) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        connect = (
            f'{sys.executable} -c "import socket; '
            f"socket.create_connection(('127.0.0.1', {port}), timeout=5); print('connected')\""
        )
        call = FakeToolCall("shell", {"command": connect, "network": True})
        # headless, --yes is not enough: refused, with the way to allow it
        server.add(Turn(tool_calls=[call]), Turn(text="no network"))
        done = loom_in_process(["run", "-p", "go", "--yes"], layout.project, server)
        assert done.returncode == 0, done.stderr
        assert "refused shell" in done.stderr and "network = true" in done.stderr
        # in the REPL the person answers "y": that one command gets the network
        server.add(Turn(tool_calls=[call]), Turn(text="fetched"))
        done = loom_in_process(
            [], layout.project, server, "fetch it\ny\n", TMPDIR=str(layout.systmp)
        )
        assert done.returncode == 0, done.stderr
        assert "runs sandboxed (bubblewrap)" in done.stdout  # the question says so
        result = last_tool_result(server)
        assert result["content"] == "connected\n[exit code 0]"
        # the next command without the flag is back to no network
        off = run_command(server, layout, connect)
        assert off.get("is_error") is True and "connected" not in off["content"]


def _loom_where_no_sandbox_can_start(
    args: list[str], layout: Layout, server: FakeLlmServer
) -> subprocess.CompletedProcess[str]:
    """`loom ARGS` inside an outer bubblewrap that forbids new user namespaces: a real
    machine where the sandbox cannot start (as in a locked-down container)."""
    bwrap = shutil.which("bwrap") or "/usr/bin/bwrap"
    env = {**os.environ, **provider_env(server), "TMPDIR": str(layout.systmp)}
    outer = [bwrap, "--unshare-user", "--disable-userns", "--dev-bind", "/", "/", "--"]
    return subprocess.run(
        [*outer, sys.executable, "-m", "loom", *args],
        cwd=layout.project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_without_a_sandbox_loom_says_so_once_and_shell_needs_a_person(
    server: FakeLlmServer, layout: Layout
) -> None:
    command = "echo ran > ran.txt"
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": command})]), Turn(text="x"))
    done = _loom_where_no_sandbox_can_start(["run", "-p", "go", "--yes"], layout, server)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("no sandbox for agent commands on this machine") == 1
    assert "Creating new namespace failed" in done.stderr  # the real reason, from bwrap
    assert "refused shell" in done.stderr and "--no-sandbox" in done.stderr
    assert not (layout.project / "ran.txt").exists()
    # --no-sandbox is the explicit way to let --yes run shell unconfined
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": command})]), Turn(text="x"))
    args = ["run", "-p", "go", "--yes", "--no-sandbox"]
    done = _loom_where_no_sandbox_can_start(args, layout, server)
    assert done.returncode == 0, done.stderr
    assert (layout.project / "ran.txt").read_text() == "ran\n"
    assert "no sandbox for agent commands" not in done.stderr


def test_unix_socket_files_are_out_of_reach_with_the_network_off(
    server: FakeLlmServer, layout: Layout
) -> None:
    path = layout.project / "s.sock"  # in the writable project
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))
        listener.listen(8)
        connect = (
            f'{sys.executable} -c "import socket; '
            f"socket.socket(socket.AF_UNIX).connect('{path}'); print('connected')\""
        )
        off = run_command(server, layout, connect)
        assert off.get("is_error") is True and "Permission denied" in off["content"]
        config = layout.loom_home / "config" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text("[sandbox]\nnetwork = true\n")
        on = run_command(server, layout, connect)
        assert on["content"] == "connected\n[exit code 0]"


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_command_cannot_type_into_the_persons_tmux(server: FakeLlmServer, layout: Layout) -> None:
    sock = layout.systmp / "tmux.sock"
    pwned = layout.outside / "pwned"
    subprocess.run(["tmux", "-S", str(sock), "new-session", "-d", "sh"], check=True)
    try:
        typed = f"tmux -S {sock} send-keys 'touch {pwned}' Enter"
        result = run_command(server, layout, f"{typed}; sleep 1")
        assert not pwned.exists()
        assert "error connecting to" in result["content"]
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], check=False)
