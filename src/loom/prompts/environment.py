"""The environment block of the system prompt: where the agent is and what it may do.

Gathered once per session (the block must not change between calls, or every call
would miss the provider's prompt cache): the working folder, platform, shell, today's
date, the git branch with a short status, and whether commands run sandboxed with the
network on or off. The git part is one `git status` run with repository config that
could start programs neutralised (`loom.gitmeta`).
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
from dataclasses import dataclass, field
from pathlib import Path

MAX_STATUS_LINES = 12  # changed files listed by name; the rest are counted


@dataclass(frozen=True)
class Environment:
    cwd: str
    project_root: str
    platform: str
    shell: str
    date: str
    git_branch: str | None = None  # None: not a git repository (or git is missing)
    git_status: tuple[str, ...] = ()  # porcelain lines, at most MAX_STATUS_LINES
    git_changed: int = 0  # how many paths the status listed in all
    in_git: bool = False
    sandbox: str = "unknown"  # e.g. "sandboxed (bubblewrap)", "not sandboxed (...)"
    network: str = "unknown"  # "on" | "off" | "asks per command"
    notes: tuple[str, ...] = field(default_factory=tuple)

    def render(self) -> str:
        lines = ["# Environment", ""]
        where = self.cwd
        if self.project_root and self.project_root != self.cwd:
            where += f" (project root: {self.project_root})"
        lines.append(f"- Working folder: {where}")
        lines.append("- Tool paths are relative to the project root")
        lines.append(f"- Platform: {self.platform}; shell: {self.shell}")
        lines.append(f"- Today's date: {self.date}")
        lines.append(f"- Git: {self._git_line()}")
        lines.extend(f"    {entry}" for entry in self.git_status)
        if self.git_changed > len(self.git_status):
            lines.append(f"    ... and {self.git_changed - len(self.git_status)} more")
        lines.append(f"- Commands: {self.sandbox}; network {self.network}")
        lines.extend(f"- {note}" for note in self.notes)
        return "\n".join(lines)

    def _git_line(self) -> str:
        if not self.in_git:
            return "not a git repository"
        branch = self.git_branch or "detached HEAD"
        if not self.git_changed:
            return f"branch {branch}, clean working tree"
        return f"branch {branch}, {self.git_changed} changed path(s) (git status --short):"


def environment_news(snapshot: Environment, now: Environment) -> str:
    """How the git state of `now` differs from the session's `snapshot`, as a block for
    the call's context ("" when it does not): the system prompt keeps the snapshot."""
    if (now.git_branch, now.git_status, now.git_changed) == (
        snapshot.git_branch,
        snapshot.git_status,
        snapshot.git_changed,
    ):
        return ""
    lines = ["# Since the session started", "", f"- Git now: {now._git_line()}"]
    lines.extend(f"    {entry}" for entry in now.git_status)
    if now.git_changed > len(now.git_status):
        lines.append(f"    ... and {now.git_changed - len(now.git_status)} more")
    return "\n".join(lines)


def detect_environment(
    project_root: Path,
    cwd: Path | None = None,
    *,
    sandbox: str = "unknown",
    network: str = "unknown",
    today: _dt.date | None = None,
) -> Environment:
    """The environment of a session in `project_root`. Runs git once; never raises."""
    root = str(project_root)
    here = str(cwd or project_root)
    branch, status, changed, in_git = _git_state(project_root)
    return Environment(
        cwd=here,
        project_root=root,
        platform=_platform(),
        shell=os.environ.get("SHELL") or ("cmd.exe" if os.name == "nt" else "/bin/sh"),
        date=(today or _dt.date.today()).isoformat(),
        git_branch=branch,
        git_status=status,
        git_changed=changed,
        in_git=in_git,
        sandbox=sandbox,
        network=network,
    )


def _platform() -> str:
    system = platform.system() or "unknown"
    release = platform.release()
    machine = platform.machine()
    text = f"{system} {release}".strip()
    return f"{text} ({machine})" if machine else text


def _git_state(root: Path) -> tuple[str | None, tuple[str, ...], int, bool]:
    """(branch, first status lines, number of changed paths, inside a repository)."""
    from loom.gitmeta import run_git

    out = run_git(root, "status", "--porcelain=v1", "--branch", "--untracked-files=normal")
    if out is None:
        return None, (), 0, False
    branch: str | None = None
    entries: list[str] = []
    changed = 0
    for line in out.splitlines():
        if line.startswith("## "):
            branch = _branch_of(line[3:])
        elif line.strip():
            changed += 1
            if len(entries) < MAX_STATUS_LINES:
                entries.append(line)
    return branch, tuple(entries), changed, True


def _branch_of(header: str) -> str | None:
    """`main...origin/main [ahead 1]` -> `main`; `HEAD (no branch)` -> None."""
    if header.startswith("HEAD (no branch)"):
        return None
    if header.startswith("No commits yet on "):
        return header[len("No commits yet on ") :].strip()
    return header.split("...", 1)[0].split(" ", 1)[0] or None
