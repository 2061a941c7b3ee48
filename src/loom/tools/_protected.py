"""Files whose content decides what Loom or git will run: a write to one always asks.

Auto-approving `file_write` must not hand out code execution: with a write to
`.git/config` (`core.fsmonitor = <command>`) the next `git status` would run a program.
So a write to any of these asks a person whatever is auto-approved or granted, and the
question says why:

- anything inside a `.git` folder (config, hooks, info/attributes, a submodule's
  `.git/modules/...`), or a `.git` file (it redirects git to another repository);
- the folder `core.hooksPath` names, when it is inside the project (`.husky/_`, ...);
- `.loom.toml`: Loom's project configuration (auto-approvals, language servers it
  starts, shell settings);
- `.mcp.json`: the MCP servers Loom starts;
- `.gitattributes`: it chooses which filter and diff programs git runs on which files;
- `.gitmodules`: it tells git which repositories to fetch and check out as submodules.

`LOOM.md` is not on the list: it is read as instructions by the model, which cannot
run anything with it that would not ask on its own; treating it like configuration
would make every rules edit a question without closing a hole.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path, PurePosixPath

from loom._gitsafe import hardened_env
from loom.core.protected_paths import path_reason

_hooks_cache: dict[str, tuple[tuple[int, int], str | None]] = {}


def _hooks_dir(root: str) -> str | None:
    """`core.hooksPath` relative to the project when it points inside it, else None.
    Cached while `.git/config` is unchanged."""
    config = os.path.join(root, ".git", "config")
    try:
        info = os.stat(config)
        key = (info.st_mtime_ns, info.st_size)
    except OSError:
        key = (0, 0)
    cached = _hooks_cache.get(root)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        # reading config runs nothing; the hardened env keeps GIT_* from redirecting it
        # (not run_git: its own `-c core.hooksPath` would hide the repository's value)
        out = subprocess.run(
            ["git", "config", "--get", "core.hooksPath"],
            cwd=root,
            env=hardened_env(),
            capture_output=True,
            text=True,
            timeout=5,
            stdin=subprocess.DEVNULL,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    found: str | None = None
    if out:
        target = os.path.realpath(os.path.join(root, os.path.expanduser(out)))
        if target.startswith(root.rstrip(os.sep) + os.sep):
            found = PurePosixPath(Path(os.path.relpath(target, root))).as_posix()
    _hooks_cache[root] = (key, found)
    return found


def protected_reason(root: Path | str, rel: str) -> str | None:
    """Why a write to `rel` (posix, relative to the project root) always asks, or None."""
    reason = path_reason(rel)
    if reason:
        return reason
    parts = [p.casefold() for p in rel.split("/") if p not in ("", ".")]
    if not parts:
        return None
    hooks = _hooks_dir(os.path.realpath(root))
    if hooks is not None:
        folded = hooks.casefold()
        joined = "/".join(parts)
        if joined == folded or joined.startswith(folded + "/"):
            return f"git runs the scripts in {hooks}/ as hooks (core.hooksPath)"
    return None
