"""Issue 20, route 7: the floor judges wrappers and multi-call binaries by what they
finally run (`busybox rm -rf /`, `timeout 5 rm -rf /`, `find / -delete`, ...), under
`--yes` and every grant, and still lets the ordinary forms of those tools through."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.permissions import Decision, GrantStore, PermissionPolicy
from loom.permissions.dangerous import dangerous_reason
from loom.permissions.wrappers import unwrap
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.loom_cli import loom_in_process
from tests.support.permissions import SHELL

FLOORED = [
    "busybox rm -rf /",
    "/bin/busybox rm -rf /usr",
    "toybox rm -r -f /",
    "env rm -rf /",
    "env -i PATH=/bin rm -rf /",
    "env -S 'rm -rf /'",
    "command rm -rf /",
    "nice -n 10 rm -rf /",
    "nice -10 rm -rf ~",
    "nohup rm -rf / &",
    "timeout 5 rm -rf /",
    "timeout -k 1 5s busybox rm -rf /home",
    "sudo -u root nice -n 5 timeout 10 busybox rm -rf /",
    "stdbuf -oL rm -rf /",
    "ionice -c 3 rm -rf /",
    "flock /tmp/l rm -rf /",
    "su -c 'rm -rf /'",
    "watch -n 1 rm -rf /",
    "busybox sh -c 'rm -rf /'",
    "some-unknown-wrapper --opt value rm -rf /",
    "echo / | xargs rm -rf",
    "xargs -I {} rm -rf {}",
    "ls | xargs -I{} find {} -delete",
    "find / -delete",
    "find ~ -type f -delete",
    "find . -delete",
    "find / -exec rm -rf {} +",
    "busybox find / -delete",
    "rsync -a --delete empty/ /",
    "rsync -a --delete-after empty/ ~/",
    "nohup busybox rsync --del a/ /",
    "timeout 5 mkfs.ext4 /dev/sda",
    "busybox dd if=/dev/zero of=/dev/sda",
    "timeout 9 chmod -R 777 /",
    # the same targets spelled with `.` and `..` steps
    "rm -rf /./usr",
    "rm -rf /home/../usr",
    "busybox rm -rf /./",
    "rm -rf //usr/.",
    "rm -rf ~/./",
    "rm -rf $HOME/x/..",
    "find /. -delete",
    "find ./. -delete",
    "rsync -a --delete empty/ /.",
    "chmod -R 777 /usr/../",
]

ORDINARY = [
    "find . -name '*.pyc' -delete",
    "find / -name x",
    "rsync -a --delete build/ out/",
    "git rm -r --cached .",
    "timeout 5 pytest",
    "busybox ls /",
    "nice make",
    "xargs -n1 echo",
    "rm -rf build",
    "env FOO=1 python x.py",
    "rm -rf build/../dist",
    "find ./. -name '*.o' -delete",
]


@pytest.mark.parametrize("command", FLOORED)
def test_wrapped_catastrophes_are_on_the_floor(store: GrantStore, command: str) -> None:
    assert dangerous_reason(command), command
    store.add("shell", "any", "*")
    policy = PermissionPolicy(store, auto_approve_all=True, auto_approve_tools={"shell"})
    assert policy.check(SHELL, {"command": command}).decision is Decision.ASK


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_uses_of_those_tools_are_not(command: str) -> None:
    assert dangerous_reason(command) is None, command


def test_unwrap_finds_the_real_command() -> None:
    words = ("sudo", "-u", "root", "nice", "-n", "5", "timeout", "-s", "KILL", "10", "rm", "-rf")
    assert unwrap(words).start == 10
    assert unwrap(("env", "-S", "rm -rf /")).scripts == ("rm -rf /",)
    assert unwrap(("xargs", "-I", "{}", "rm", "{}")).from_input


def test_busybox_rm_is_refused_under_yes(server: FakeLlmServer, project: Path) -> None:
    server.add(Turn(tool_calls=[FakeToolCall("shell", {"command": "busybox rm -rf /"})]))
    server.add(Turn(text="refused"))
    done = loom_in_process(["run", "-p", "wipe", "--yes"], project, server)
    assert done.returncode == 0
    assert "refused shell" in done.stderr and "dangerous" in done.stderr
