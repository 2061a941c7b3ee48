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
from pathlib import Path, PurePosixPath

from loom._gitsafe import hooks_folder
from loom.core.protected_paths import path_reason


def _hooks_dir(root: str) -> str | None:
    """`core.hooksPath` relative to the project when it points inside it, else None.
    (`hooks_folder` is cached while the git config files are unchanged.)"""
    folder = hooks_folder(root)
    if folder is None:
        return None
    target = os.path.realpath(folder)
    if not target.startswith(root.rstrip(os.sep) + os.sep):
        return None
    return PurePosixPath(Path(os.path.relpath(target, root))).as_posix()


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
