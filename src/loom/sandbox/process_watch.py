"""The process cap for root where no cgroup can be made: a watcher inside the sandbox.

The kernel never applies RLIMIT_NPROC to uid 0 (not even inside a user namespace), so
root without a cgroup Loom may make (a container whose /sys/fs/cgroup is read-only)
had no process cap at all. The watcher runs as the command's parent inside the sandbox:
it counts the entries of the sandbox's own /proc (the PID namespace's processes only)
every few milliseconds and, past `max_processes`, kills every process in the namespace
(`kill(-1)` spares only itself and the namespace's init) and says so. It is a poll, so
a fork bomb may briefly get past the number, never far: it is stopped within a tick.
It forks nothing itself, so a namespace full of processes cannot stall it.
"""

from __future__ import annotations

import os
import sys

TICK_S = 0.005
OWN = 2  # the namespace's init (bwrap) and the watcher itself

# Run with `python -I -S -c WATCHER CAP ARGV...`: the standard library only, no site.
WATCHER = f"""
import os, signal, sys, time
cap, argv = int(sys.argv[1]), sys.argv[2:]
child = os.fork()
if child == 0:
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(argv[0] + ": " + exc.strerror + "\\n")
        os._exit(127)
def count():
    try:
        return sum(1 for name in os.listdir("/proc") if name.isdigit())
    except OSError:
        return 0
while True:
    done, status = os.waitpid(child, os.WNOHANG)
    if done:
        code = os.waitstatus_to_exitcode(status)
        sys.exit(code if code >= 0 else 128 - code)
    if count() > cap + {OWN}:
        for _ in range(200):
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
            while True:
                try:
                    if os.waitpid(-1, os.WNOHANG)[0] == 0:
                        break
                except ChildProcessError:
                    break
            if count() <= {OWN}:
                break
            time.sleep({TICK_S})
        sys.stderr.write(
            "[sandbox: the command started more than " + str(cap) + " processes, the "
            "limit ([sandbox] max_processes), so all of them were stopped]\\n"
        )
        sys.exit(137)
    time.sleep({TICK_S})
"""


def needed(max_processes: int | None, by_cgroup: bool) -> bool:
    """Whether a command needs the watcher: a cap, root, and no cgroup holding it."""
    return max_processes is not None and not by_cgroup and os.geteuid() == 0


def watcher_prefix(max_processes: int) -> list[str]:
    """What to put before the command inside the sandbox."""
    return [sys.executable, "-I", "-S", "-c", WATCHER, str(max_processes)]
