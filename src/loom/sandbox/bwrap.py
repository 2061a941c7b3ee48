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
from typing import Literal

from loom.sandbox import process_watch
from loom.sandbox.limits import describe, prlimit_prefix
from loom.sandbox.policy import SandboxPolicy
from loom.sandbox.seccomp import filter_fd, unix_socket_filter
from loom.sandbox.temp_mounts import temp_mounts

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


MountKind = Literal["bind", "hide", "ro"]
_ORDER: dict[str, int] = {"bind": 0, "hide": 1, "ro": 2}


def mount_plan(policy: SandboxPolicy) -> list[tuple[MountKind, Path]]:
    """The mounts on top of the read-only `/`, in order: parents before children (so a
    nested folder's mount lands on top), and at one depth writable, then hidden, then
    read-only (the stricter wins).

    A hidden or protected path inside a writable folder (LOOM_HOME under /tmp, `.git`
    in the project) is a mount point, which cannot be renamed or removed; but a folder
    between it and the writable folder could be renamed away, and a new one made in its
    place (a fresh Loom data folder with a planted loom.db). So each of those folders is
    bound onto itself, still writable, which pins it where it is."""
    writable = policy.writable_paths()
    hidden = policy.hidden_paths()
    protected = policy.protected_paths()
    planned: dict[Path, MountKind] = {path: "bind" for path in writable}
    for path in (*hidden, *protected):
        for pin in _between(path, writable):
            planned.setdefault(pin, "bind")
    for path in hidden:
        planned[path] = "hide"
    for path in protected:
        planned[path] = "ro"
    for path in policy.own_install:
        planned.setdefault(path, "ro")
    return sorted(
        ((kind, path) for path, kind in planned.items()),
        key=lambda item: (len(item[1].parts), _ORDER[item[0]]),
    )


def _between(path: Path, writable: list[Path]) -> list[Path]:
    """The folders strictly between `path` and the deepest writable folder holding it."""
    holders = [root for root in writable if root in path.parents]
    if not holders:
        return []
    root = max(holders, key=lambda r: len(r.parts))
    return [parent for parent in path.parents if root in parent.parents]


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
            if policy.shared_net:  # the session's namespace, entered before bwrap starts
                args = [*policy.shared_net, *args]
            else:
                args.append("--unshare-net")
            fd = filter_fd()  # no Unix sockets either (see seccomp.py)
            if fd is not None:
                args += ["--seccomp", str(fd)]
                fds = (fd,)
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        plan = mount_plan(policy)
        # /tmp first: what lies under it is mounted on top
        args += temp_mounts(policy.temp, (path for _kind, path in plan))
        hidden: list[str] = []
        for kind, path in plan:
            where = str(path)
            if kind == "hide":  # an empty folder that cannot be written
                args += ["--tmpfs", where]
                hidden.append(where)
            elif kind == "bind":
                args += ["--bind", where, where]
            else:
                args += ["--ro-bind-try", where, where]
        # Read-only only once every mount is made: a project inside a hidden folder (a
        # worktree under Loom's data folder) needs its mount point made in the tmpfs.
        for where in hidden:
            args += ["--remount-ro", where]
        limits = prlimit_prefix(policy.limits, policy.memory_by_cgroup)
        cap = policy.limits.max_processes
        if cap is not None and process_watch.needed(cap, policy.processes_by_cgroup):
            limits += process_watch.watcher_prefix(cap)  # root: RLIMIT_NPROC does not hold
        args += ["--chdir", str(cwd), "--", *limits, *argv]
        return args, fds

    def enforced(self, policy: SandboxPolicy) -> list[str]:
        """What this backend enforces, one line each (for `loom sandbox check`)."""
        network = (
            "on (the host's network)"
            if policy.network
            else "off: a private network namespace (no TCP, UDP, DNS or abstract Unix "
            "sockets; its loopback is the session's own, shared by its commands)"
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
            "Loom's own folders: hidden (an empty read-only folder in their place)",
            "temp: /tmp and $TMPDIR are the session's own folder (the shared /tmp is out "
            "of view), removed when the session ends",
            f"network: {network}",
            "processes: own PID and IPC namespaces (cannot see or signal other processes)",
            f"privileges: own user namespace, all capabilities dropped{nested}, "
            "no_new_privs (root gets no way around it)",
            *(f"limits: {line}" for line in describe(policy.limits)),
        ]
