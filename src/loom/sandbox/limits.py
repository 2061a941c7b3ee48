"""Resource limits for sandboxed commands (`[sandbox] max_processes / max_memory_mb /
max_file_mb`), enforced for root too.

Two layers:

- a cgroup per sandbox (one session's commands) where this machine lets Loom make one
  (cgroup v2 with the `pids` and `memory` controllers delegated to Loom's own group,
  else the v1 `pids` and `memory` hierarchies): `pids.max` caps the number of processes
  and `memory.max` (v1: `memory.limit_in_bytes`) the memory of all of them together. A
  small `sh` joins the group and then execs bubblewrap, so every process of the command
  is in it from the start. One group serves all the session's commands (making and
  removing one per command cost ~20 ms each time); it is removed when the session's
  sandbox goes, and a group whose process is gone is removed by the next Loom.
- rlimits set by `prlimit` inside the sandbox, on the command itself: RLIMIT_FSIZE (no
  file larger than max_file_mb: the write fails with EFBIG / SIGXFSZ), RLIMIT_NPROC
  (counted per user namespace, so only the command's own processes count; the kernel
  does not apply it to root, hence the cgroup, or for root without one the watcher in
  `process_watch.py`), and RLIMIT_DATA (a per-process memory
  cap, only where no memory cgroup could be made). Set inside the sandbox, after its user
  namespace exists, so the person's other processes never count against the limit, and
  with no capabilities left the command cannot raise them again.

Where neither cgroups nor prlimit are available, `describe()` says what is not enforced
(`loom sandbox check` prints it).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from loom import defaults

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP_PREFIX = "loom-cmd-"
STALE_AFTER_S = 120.0  # leftover groups of crashed runs are removed after this
MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    max_processes: int | None = defaults.SANDBOX_MAX_PROCESSES
    max_memory_mb: int | None = defaults.SANDBOX_MAX_MEMORY_MB
    max_file_mb: int | None = defaults.SANDBOX_MAX_FILE_MB

    @property
    def any(self) -> bool:
        return any(
            v is not None for v in (self.max_processes, self.max_memory_mb, self.max_file_mb)
        )


def prlimit_prefix(limits: Limits, memory_by_cgroup: bool) -> list[str]:
    """`prlimit ... --` to put before the command inside the sandbox ([] without one)."""
    program = _prlimit()
    if program is None:
        return []
    args = [program]
    if limits.max_processes is not None:
        args.append(f"--nproc={limits.max_processes}")
    if limits.max_file_mb is not None:
        args.append(f"--fsize={limits.max_file_mb * MB}")
    if limits.max_memory_mb is not None and not memory_by_cgroup:
        args.append(f"--data={limits.max_memory_mb * MB}")
    return [*args, "--"] if len(args) > 1 else []


_found_prlimit: list[str | None] = []


def _prlimit() -> str | None:
    if not _found_prlimit:
        _found_prlimit.append(shutil.which("prlimit") or _existing("/usr/bin/prlimit"))
    return _found_prlimit[0]


def _existing(path: str) -> str | None:
    return path if os.path.isfile(path) else None


# -- cgroups ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Parents:
    """Where this process may make groups: a v2 folder, or v1 pids / memory folders."""

    v2: Path | None = None
    pids: Path | None = None
    memory: Path | None = None

    @property
    def caps_processes(self) -> bool:
        return self.v2 is not None or self.pids is not None

    @property
    def caps_memory(self) -> bool:
        return self.v2 is not None or self.memory is not None


_parents: list[Parents] = []
_parents_lock = threading.Lock()
_counter = itertools.count()


def cgroup_parents() -> Parents:
    """Found once per process."""
    with _parents_lock:
        if not _parents:
            _parents.append(_find_parents())
        return _parents[0]


def _find_parents() -> Parents:
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return Parents()
    v1: dict[str, str] = {}
    v2_path: str | None = None
    for line in lines:
        _id, controllers, path = line.split(":", 2)
        if controllers == "":
            v2_path = path
        for controller in controllers.split(","):
            v1[controller] = path
    if v2_path is not None:
        for mount in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
            folder = mount / v2_path.lstrip("/")
            if _v2_usable(folder):
                return Parents(v2=folder)
    pids = _v1_usable(CGROUP_ROOT / "pids", v1.get("pids"))
    memory = _v1_usable(CGROUP_ROOT / "memory", v1.get("memory"))
    return Parents(pids=pids, memory=memory)


def _v2_usable(folder: Path) -> bool:
    try:
        enabled = (folder / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False
    return {"pids", "memory"} <= set(enabled) and os.access(folder, os.W_OK)


def _v1_usable(mount: Path, path: str | None) -> Path | None:
    if path is None:
        return None
    folder = mount / path.lstrip("/")
    if (folder / "cgroup.procs").is_file() and os.access(folder, os.W_OK):
        return folder
    return None


@dataclass
class CommandGroup:
    """The cgroup(s) of one command: join them with `procs_files`, remove with `close`."""

    folders: list[Path]

    @property
    def procs_files(self) -> list[str]:
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def usable(self) -> bool:
        return all(folder.is_dir() for folder in self.folders)

    def close(self) -> None:
        for folder in self.folders:
            _remove(folder, attempts=20)


def make_group(limits: Limits, parents: Parents | None = None) -> CommandGroup | None:
    """A new cgroup for one command with `limits` written, or None where none can be
    made (then the rlimits are all there is)."""
    parents = parents or cgroup_parents()
    name = f"{GROUP_PREFIX}{os.getpid()}-{next(_counter)}"
    memory = None if limits.max_memory_mb is None else limits.max_memory_mb * MB
    procs = limits.max_processes
    made: list[Path] = []
    try:
        if parents.v2 is not None:
            folder = _new(parents.v2, name, made)
            _write(folder / "pids.max", procs)
            _write(folder / "memory.max", memory)
            with contextlib.suppress(OSError):  # no swap accounting: nothing to cap
                _write(folder / "memory.swap.max", 0 if memory is not None else None)
        else:
            if parents.pids is not None and procs is not None:
                _write(_new(parents.pids, name, made) / "pids.max", procs)
            if parents.memory is not None and memory is not None:
                folder = _new(parents.memory, name, made)
                _write(folder / "memory.limit_in_bytes", memory)
                with contextlib.suppress(OSError):
                    _write(folder / "memory.memsw.limit_in_bytes", memory)
    except OSError:
        CommandGroup(made).close()
        return None
    return CommandGroup(made) if made else None


def _new(parent: Path, name: str, made: list[Path]) -> Path:
    _sweep_stale(parent)
    folder = parent / name
    folder.mkdir()
    made.append(folder)
    return folder


def _write(path: Path, value: int | None) -> None:
    path.write_text("max" if value is None and path.name.endswith(".max") else str(value))


def _sweep_stale(parent: Path) -> None:
    """Groups left by a Loom that died (its process id is in the name and is gone):
    removing a group that still has processes fails, so only empty ones go."""
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            if entry.name.startswith(GROUP_PREFIX) and not _owner_alive(entry.name):
                with contextlib.suppress(OSError):
                    if now - entry.stat().st_mtime > STALE_AFTER_S:
                        os.rmdir(entry.path)


def _owner_alive(name: str) -> bool:
    owner = name.removeprefix(GROUP_PREFIX).split("-", 1)[0]
    if not owner.isdigit():
        return False
    try:
        os.kill(int(owner), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _remove(folder: Path, attempts: int) -> None:
    for attempt in range(attempts):  # the last processes may still be exiting
        try:
            os.rmdir(folder)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01 * (attempt + 1))


def join_then_exec(group: CommandGroup, argv: list[str]) -> list[str]:
    """`argv` started by a shell that first moves itself into the group (every process of
    the command is in it from the first one); it refuses to run outside the group."""
    files = group.procs_files
    joins = " && ".join(f'echo $$ > "${index + 1}"' for index in range(len(files)))
    script = f'{joins} && shift {len(files)} && exec "$@"'
    return ["/bin/sh", "-c", script, "loom-limits", *files, *argv]


def describe(limits: Limits, parents: Parents | None = None) -> list[str]:
    """What is enforced, one line each (for `loom sandbox check`)."""
    parents = parents or cgroup_parents()
    has_prlimit = _prlimit() is not None
    lines: list[str] = []
    if limits.max_processes is not None:
        if parents.caps_processes:
            how = "a cgroup (pids.max), root included"
        elif os.geteuid() == 0:
            how = (
                "a watcher in the sandbox that stops all of the command's processes past "
                "it (root: no cgroup could be made here, and RLIMIT_NPROC never holds root)"
            )
        elif has_prlimit:
            how = "RLIMIT_NPROC (counted per user namespace)"
        else:
            how = "NOT enforced (no cgroup and no prlimit here)"
        lines.append(f"processes: at most {limits.max_processes}, by {how}")
    if limits.max_memory_mb is not None:
        if parents.caps_memory:
            how = "a cgroup, for all the command's processes together"
        elif has_prlimit:
            how = "RLIMIT_DATA, per process (no memory cgroup could be made here)"
        else:
            how = "NOT enforced (no cgroup and no prlimit here)"
        lines.append(f"memory: at most {limits.max_memory_mb} MB, by {how}")
    if limits.max_file_mb is not None:
        how = "RLIMIT_FSIZE" if has_prlimit else "NOT enforced (no prlimit here)"
        lines.append(f"file size: at most {limits.max_file_mb} MB per file, by {how}")
    return lines
