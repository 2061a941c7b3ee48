"""Run git so that repository configuration cannot make it execute programs.

Repository config (`.git/config` and what it includes) can name programs git runs on
its own: `core.fsmonitor` on every status, clean/smudge filters, diff drivers, pagers,
gpg, credential helpers, ssh commands, lazy fetches in partial clones. Writes inside
`.git/` always ask a person (see `_protected.py`), and as a second line the git tool
overrides every such key it finds with `-c key=value`. Read-only calls also neutralize
filters and hooks; write calls (add, commit, stash) keep the person's filters (git-lfs
must still clean what it adds) and hooks. Loom's own git calls (`loom.gitmeta`'s status
after every change) are read-only calls too. Only the standard library.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
from collections.abc import Mapping

# Always applied, on every call.
_FIXED = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
    ("core.askPass", ""),
    ("core.sshCommand", "false"),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
    ("color.ui", "never"),
)
# Also applied to read-only calls.
_READ_ONLY = (("core.hooksPath", "/dev/null"),)

# Keys (lower-cased, subsection as `*`) whose value is a program git may run.
_PROGRAM_KEYS = [
    (re.compile(r"^pager\..+$"), "false"),
    (re.compile(r"^gpg\..+\.program$"), "false"),
    (re.compile(r"^diff\..+\.(?:command|textconv)$"), ""),
    (re.compile(r"^merge\..+\.driver$"), ""),
    (re.compile(r"^remote\..+\.(?:uploadpack|receivepack|vcs|proxy)$"), ""),
    (re.compile(r"^uploadpack\.packobjectshook$"), ""),
    (re.compile(r"^credential\..+\.helper$"), ""),
    (re.compile(r"^protocol\..+\.allow$"), "never"),
]
_READ_ONLY_KEYS = [
    (re.compile(r"^filter\..+\.(?:clean|smudge|process)$"), ""),
    (re.compile(r"^filter\..+\.required$"), "false"),
]

# Variables that would redirect git or make it run something, from Loom's own environment.
_DROPPED_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_EXTERNAL_DIFF",
    "GIT_EXEC_PATH",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_PROXY_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_PAGER",
)
SAFE_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_NO_LAZY_FETCH": "1",  # partial clones: never fetch missing objects (git >= 2.45)
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_ALLOW_PROTOCOL": "",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": "true",
}


def _override_for(key: str, read_only: bool) -> str | None:
    lowered = key.lower()
    rules = _PROGRAM_KEYS + (_READ_ONLY_KEYS if read_only else [])
    for pattern, value in rules:
        if pattern.match(lowered):
            return value
    return None


def safe_config_args(keys: list[str], read_only: bool) -> list[str]:
    """`-c key=value` pairs that neutralize every program-running key in `keys` (the
    repository's configured key names), plus the fixed ones."""
    pairs = list(_FIXED) + (list(_READ_ONLY) if read_only else [])
    seen = {name.lower() for name, _ in pairs}
    for key in keys:
        value = _override_for(key, read_only)
        if value is not None and key.lower() not in seen:
            seen.add(key.lower())
            pairs.append((key, value))
    args: list[str] = []
    for name, value in pairs:
        args += ["-c", f"{name}={value}"]
    return args


def git_env_changes() -> dict[str, str | None]:
    """Variables to set (and, as None, to remove) for a git call."""
    changes: dict[str, str | None] = dict.fromkeys(_DROPPED_ENV)
    changes.update(SAFE_ENV)
    return changes


_LIST_KEYS = ("git", "config", "--list", "--name-only", "-z")


def configured_keys_now(root: str, env: Mapping[str, str]) -> list[str]:
    """`configured_keys` for synchronous callers."""
    try:
        out = subprocess.run(
            _LIST_KEYS, cwd=root, env=dict(env), capture_output=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [k for k in out.decode("utf-8", "replace").split("\0") if k]


async def configured_keys(root: str, env: Mapping[str, str]) -> list[str]:
    """The names of every configuration key git would read in `root` (includes too).
    Reading configuration runs nothing; an unreadable config gives []."""
    process = await asyncio.create_subprocess_exec(
        *_LIST_KEYS,
        cwd=root,
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        out, _ = await asyncio.wait_for(process.communicate(), 10)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)
        await process.wait()
        raise
    return [k for k in out.decode("utf-8", "replace").split("\0") if k]
