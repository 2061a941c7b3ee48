"""What a sandboxed agent command may do: the folders it may write and whether it may
use the network. Built from `[sandbox]` and Loom's paths; the backends only enforce it.

Writable: the project root (unless it is the home folder, `/` or a folder holding home:
where Loom was started never opens those), `[sandbox] writable` and the session's own
temp folder (`temp`, see `session_temp.py`: bound at `/tmp` and named in `$TMPDIR`; the
machine's shared temp folder is not writable). Everything else is read-only. A few
paths that would let a command reach beyond the sandbox later stay read-only too: the
repository's whole `.git` (see `gitdirs.py`), the folder `core.hooksPath` names when it
exists (`.githooks`, husky's `.husky/_`: the person's own next `git commit` runs what is
there) and the project's `.loom.toml`, `.mcp.json` and `.loom/` when they exist. New ones
cannot be mounted (a mount needs an existing path): `sweep.py` takes away any a command
creates, before Loom reads them.

Hidden: Loom's own folders (data, state, cache, config: threads, loom.db with its grants
and MCP approvals, trust.json, checkpoints, pending.json, the user config). Loom acts on
what they hold later, unsandboxed, so a command that could write them could reach past
the sandbox (a `core.fsmonitor` in a checkpoint store's git config, a grant row in
loom.db). Read-only would be enough against that; hidden (an empty read-only folder in
their place) also keeps private threads and the person's config out of the command's
reach. Nothing a command needs lives there: the tools that use Loom's caches run in
Loom's own process, not in the sandbox.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from loom._gitsafe import hooks_folder
from loom.sandbox.gitdirs import git_dirs
from loom.sandbox.limits import Limits

Mode = Literal["on", "ask", "off"]
MODES: tuple[str, ...] = ("on", "ask", "off")

# Relative to the project root; kept read-only when they exist (see the module doc).
PROTECTED_IN_PROJECT = (".loom.toml", ".mcp.json", ".loom")


@dataclass(frozen=True)
class WritableRoot:
    path: Path  # resolved (symlinks followed): the mount or rule is on the real folder
    why: str  # "project root", "[sandbox] writable"; or what a hidden one holds


@dataclass(frozen=True)
class SandboxPolicy:
    mode: Mode
    network: bool
    project_root: Path
    writable: tuple[WritableRoot, ...]
    missing: tuple[str, ...] = ()  # `[sandbox] writable` entries that do not exist
    hidden: tuple[WritableRoot, ...] = ()  # Loom's own folders: empty and read-only inside
    quarantine: Path | None = None  # where files a command may not create are moved
    limits: Limits = field(default_factory=Limits)  # processes, memory, file size
    memory_by_cgroup: bool = False  # this launch caps memory with a cgroup (not rlimits)
    processes_by_cgroup: bool = False  # this launch caps processes with a cgroup
    nested_git: tuple[Path, ...] = ()  # `.git` of repositories inside the project
    own_install: tuple[Path, ...] = ()  # Loom's own Python under /tmp (`own_install_in_temp`)
    temp: Path | None = None  # the session's own temp folder (None: one per command)
    # the argv prefix entering the session's network namespace (`session_net.py`); ():
    # one namespace per command
    shared_net: tuple[str, ...] = ()

    def writable_paths(self) -> list[Path]:
        return [root.path for root in self.writable]

    def hidden_paths(self) -> list[Path]:
        return [root.path for root in self.hidden]

    def protected_paths(self) -> list[Path]:
        """The protected paths that exist now (checked per command: `git init` may
        create a repository during a session)."""
        here = [self.project_root / rel for rel in PROTECTED_IN_PROJECT]
        found = git_dirs(self.project_root)
        hooks = hooks_folder(str(self.project_root)) if found else None
        if hooks is not None and os.path.isdir(hooks):  # `core.hooksPath`: `.husky/_`
            here.append(Path(hooks))
        for path in (*here, *self.nested_git):
            if os.path.lexists(path) and _real(path) not in found:
                found.append(_real(path))
        return found


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def build_policy(
    project_root: Path,
    *,
    mode: Mode = "on",
    network: bool = False,
    extra_writable: tuple[str, ...] | list[str] = (),
    loom_dirs: tuple[tuple[Path, str], ...] = (),
    quarantine: Path | None = None,
    limits: Limits | None = None,
) -> SandboxPolicy:
    """The policy for commands run in `project_root`. `loom_dirs` (Loom's own folders)
    are hidden; they are created when missing, so that no command can create one first
    and plant a loom.db or trust.json there. Extra writable folders that do not exist
    are listed in `missing` and skipped."""
    if mode not in MODES:
        raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}, not {mode!r}")
    root = _real(project_root)
    roots: list[WritableRoot] = []
    if not _holds_home(root):  # started in ~ or /: never every file of the person's
        roots.append(WritableRoot(root, "project root"))
    hidden: list[WritableRoot] = []
    for folder, why in loom_dirs:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue  # cannot exist, so nothing there to read or write
        hidden.append(WritableRoot(_real(folder), why))
    missing: list[str] = []
    for raw in extra_writable:
        path = Path(os.path.expanduser(raw))
        path = path if path.is_absolute() else root / path
        if not path.exists():
            missing.append(raw)
            continue
        roots.append(WritableRoot(_real(path), "[sandbox] writable"))
    return SandboxPolicy(
        mode=mode,
        network=network,
        project_root=root,
        writable=tuple(_dedupe(roots)),
        missing=tuple(missing),
        hidden=tuple(_dedupe(hidden)),
        quarantine=quarantine,
        limits=limits or Limits(),
        own_install=own_install_in_temp(),
    )


def _holds_home(folder: Path) -> bool:
    home = _real(Path.home())
    return folder == home or folder in home.parents or folder == Path(folder.anchor)


def _dedupe(roots: list[WritableRoot]) -> list[WritableRoot]:
    """Drop repeated folders (the first reason is kept). Nested ones stay: each is named
    in `loom sandbox check`, and the backends handle overlaps."""
    seen: set[Path] = set()
    kept: list[WritableRoot] = []
    for candidate in roots:
        if candidate.path not in seen:
            seen.add(candidate.path)
            kept.append(candidate)
    return kept


def policy_from_config(config: Any, paths: Any, project_root: Path | None = None) -> SandboxPolicy:
    """The policy for a LoomConfig (its `sandbox` section) and LoomPaths."""
    section = config.sandbox
    return build_policy(
        project_root or config.project_root,
        mode=section.mode,
        network=section.network,
        extra_writable=tuple(section.writable),
        loom_dirs=loom_folders(paths),
        quarantine=paths.quarantine_dir / "sandbox",
        limits=Limits(
            max_processes=section.max_processes,
            max_memory_mb=section.max_memory_mb,
            max_file_mb=section.max_file_mb,
        ),
    )


def loom_folders(paths: Any) -> tuple[tuple[Path, str], ...]:
    """Loom's own folders (LoomPaths), each with what it holds: hidden from commands."""
    return (
        (paths.data, "Loom data: threads, loom.db, trust, checkpoints"),
        (paths.state, "Loom state: pending sync"),
        (paths.cache, "Loom cache"),
        (paths.config, "Loom user config"),
    )


def exposed_code(writable: list[Path]) -> list[Path]:
    """Loom's own code (its package, the Python environment it runs from) that lies in
    one of the `writable` folders: a command could change what the next `loom` runs,
    outside the sandbox. Not made read-only (the agent's `pip install` into a project's
    own environment would fail, and Loom's dependencies live there too); `loom sandbox
    check` warns instead."""
    import sys

    import loom

    places = sorted({_real(Path(loom.__file__).parent), _real(Path(sys.prefix))})
    roots = [_real(path) for path in writable]
    return [p for p in places if any(p == root or root in p.parents for root in roots)]


def own_install_in_temp() -> tuple[Path, ...]:
    """Loom's own Python (its venv and the interpreter it was made from) when it lies
    under `/tmp`: the sandbox puts the session's own folder there, and commands still run
    Loom's interpreter (the limits' watcher, the start-up check), so it is mounted back,
    read-only, at its own path."""
    import sys

    temp = Path("/tmp")
    found = {Path(prefix).resolve() for prefix in (sys.prefix, sys.base_prefix)}
    return tuple(sorted(path for path in found if temp in path.parents))
