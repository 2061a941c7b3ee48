"""Linux: run agent commands under bubblewrap (`bwrap`, Debian package `bubblewrap`).

Why bubblewrap rather than Landlock + seccomp: a read-only bind of `/` refuses every kind
of write outside the writable folders (contents, but also chmod, chown, xattrs, device
nodes), which Landlock does not cover; a private network namespace cuts TCP, UDP, raw
and abstract Unix sockets alike (Landlock covers TCP only); a private PID namespace
keeps the command from signalling or tracing Loom and other processes; and it is an
argv wrapper, so nothing runs between fork and exec in Loom's threaded process. Unix
socket files stay reachable through any file system view, so with the network off a
small seccomp filter refuses new Unix sockets (`seccomp.py`).

Exit status: a command killed by signal N is reported by bwrap as exit code 128+N.

Root: bwrap run by root keeps every capability unless told otherwise, and a root with
CAP_SYS_ADMIN can remount `/` read-write. So every command gets its own user namespace
(`--unshare-user`), no capabilities (`--cap-drop ALL`), no nested user namespaces
(`--disable-userns`, bwrap 0.8+) and no_new_privs (bwrap sets it): the same code path
for root and for everyone else, and it needs no privilege.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from loom.sandbox.policy import SandboxPolicy
from loom.sandbox.seccomp import filter_fd, unix_socket_filter

NAME = "bubblewrap"
SMOKE_TIMEOUT_S = 10.0


def find_bwrap() -> str | None:
    return shutil.which("bwrap") or ("/usr/bin/bwrap" if Path("/usr/bin/bwrap").is_file() else None)


@functools.lru_cache(maxsize=4)
def _features(bwrap: str) -> tuple[str, bool]:
    """(version, supports --disable-userns)."""
    try:
        version = subprocess.run(
            [bwrap, "--version"], capture_output=True, text=True, timeout=SMOKE_TIMEOUT_S
        ).stdout.strip()
        helptext = subprocess.run(
            [bwrap, "--help"], capture_output=True, text=True, timeout=SMOKE_TIMEOUT_S
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "", False
    return version.removeprefix("bubblewrap ").strip(), "--disable-userns" in helptext


class Bubblewrap:
    name = NAME

    def __init__(self, executable: str) -> None:
        self.executable = executable
        self.version, self.disable_userns = _features(executable)

    def wrap(
        self, policy: SandboxPolicy, argv: Sequence[str], cwd: Path
    ) -> tuple[list[str], tuple[int, ...]]:
        """(the argv to spawn, descriptors it refers to: pass them, then close them)."""
        fds: tuple[int, ...] = ()
        args = [
            self.executable,
            "--unshare-user",
            "--unshare-pid",
            "--unshare-ipc",
            "--die-with-parent",
            "--cap-drop",
            "ALL",
        ]
        if self.disable_userns:
            args.append("--disable-userns")
        if not policy.network:
            args.append("--unshare-net")
            fd = filter_fd()  # no Unix sockets either (see seccomp.py)
            if fd is not None:
                args += ["--seccomp", str(fd)]
                fds = (fd,)
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        # Parents before children, so a nested folder's mount lands on top.
        for path in sorted(policy.writable_paths(), key=lambda p: len(p.parts)):
            args += ["--bind", str(path), str(path)]
        for path in policy.protected_paths():
            args += ["--ro-bind-try", str(path), str(path)]
        args += ["--chdir", str(cwd), "--", *argv]
        return args, fds

    def enforced(self, policy: SandboxPolicy) -> list[str]:
        """What this backend enforces, one line each (for `loom sandbox check`)."""
        network = (
            "on (the host's network)"
            if policy.network
            else "off: a private network namespace (no TCP, UDP, DNS or abstract Unix "
            "sockets; its loopback is the sandbox's own)"
        )
        if not policy.network:
            if unix_socket_filter() is not None:
                network += "; no Unix sockets (seccomp), so no tmux, docker, ssh-agent or D-Bus"
            else:
                network += "; Unix sockets NOT blocked (no seccomp table for this CPU)"
        nested = ", no nested user namespaces" if self.disable_userns else ""
        return [
            "files: everything read-only (contents and metadata: chmod, chown, xattrs) "
            "except the writable folders",
            f"network: {network}",
            "processes: own PID and IPC namespaces (cannot see or signal other processes)",
            f"privileges: own user namespace, all capabilities dropped{nested}, "
            "no_new_privs (root gets no way around it)",
        ]
