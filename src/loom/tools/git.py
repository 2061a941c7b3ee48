"""`git`: the everyday, non-destructive git subcommands.

status, diff, log, show, branch (listing only), add, commit and stash (push, list, show,
pop, apply). Commands that throw work away (reset --hard, clean -f, checkout -- .,
push --force, stash drop/clear, branch -D, ...) are refused with a message that says why;
a person who means it can run them through `shell`, which asks first.

Arguments go through an allowlist (`_git_args.py`) and git runs as Loom's own hardened
git (`loom._gitsafe`): no hooks, no configured programs, no `GIT_*` from the environment.

It runs outside the sandbox, on purpose: the sandbox keeps the whole `.git` read-only
(a command that could write it could plant `commondir`, a config or a hook that runs
later in the person's own git), and add, commit and stash must write there. What keeps
this call in bounds is the allowlist (no option that writes files, leaves the project or
runs a program), the hardened runner, and a check that the repository git finds is not
one of Loom's own stores (a planted `.git` file could point there).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loom._gitsafe import configured_keys, env_changes, overrides, run_git_async
from loom.tools._git_args import check_arguments
from loom.tools._process import run_process, tool_env
from loom.tools.base import Risk, ToolContext, ToolError, ToolResult
from loom.tools.builtin import BuiltinTool, schema
from loom.tools.presentation import one_line

SUBCOMMANDS = ("status", "diff", "log", "show", "branch", "add", "commit", "stash")
_READS = {"status", "diff", "log", "show", "branch"}
_REFUSED = {
    "reset": "it can throw away uncommitted work (reset --hard) or rewrite history",
    "clean": "it deletes untracked files for good",
    "checkout": "`checkout -- .` and friends discard uncommitted changes",
    "restore": "it discards uncommitted changes",
    "push": "pushing (and force-pushing) is left to the person",
    "rebase": "it rewrites history",
    "filter-branch": "it rewrites history",
    "gc": "it can prune unreachable work",
    "reflog": "`reflog expire/delete` drops the safety net",
    "rm": "it deletes files; use the shell tool, which asks first",
}
# Diffing subcommands never run external diff or textconv programs.
_NO_PROGRAMS = ["--no-ext-diff", "--no-textconv"]


class Git(BuiltinTool):
    name = "git"
    description = (
        "Run git (branch only lists; stash push/list/show/pop/apply). Destructive "
        "commands are refused."
    )
    parameters = schema(
        {
            "subcommand": {"type": "string", "enum": list(SUBCOMMANDS)},
            "args": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
            },
        },
        required=("subcommand",),
    )
    risk: Risk = "write"
    subject_kind = "exact"
    kind = "execute"

    def title(self, args: dict[str, Any]) -> str:
        words = [args.get("subcommand") or "", *(args.get("args") or ())]
        return one_line(" ".join(["git", *map(str, words)]))

    def __init__(
        self,
        project_root: Path | None = None,
        *,
        timeout: float = 60.0,
        max_output_bytes: int = 30_000,
        pass_env: Sequence[str] = (),
    ) -> None:
        super().__init__(project_root)
        self.pass_env = tuple(pass_env)
        self.timeout = timeout
        self.max_output_bytes = max_output_bytes

    def risk_for(self, args: dict[str, Any]) -> Risk:
        sub = args.get("subcommand")
        rest = args.get("args") or []
        if sub == "stash":
            return "read" if rest[:1] in (["list"], ["show"]) else "write"
        return "read" if sub in _READS else "write"

    def permission_subject(self, args: dict[str, Any]) -> str | None:
        sub = args.get("subcommand") if isinstance(args, dict) else None
        return f"git {sub}" if isinstance(sub, str) else None

    def sandbox_status(self, args: dict[str, Any] | None = None) -> tuple[bool, str]:
        """(runs sandboxed, a short text) for the permission prompt."""
        return False, (
            "runs outside the sandbox as Loom's hardened git (no hooks or configured "
            "programs; allowlisted arguments inside the project)"
        )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if isinstance(args, dict) and args.get("subcommand") in _REFUSED:
            sub = args["subcommand"]
            raise ToolError(
                f"git {sub} is refused: {_REFUSED[sub]}. Supported: {', '.join(SUBCOMMANDS)}. "
                "If it is really needed, ask the user or use the shell tool, which asks first."
            )
        return await super().run(args, ctx)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        sub: str = args["subcommand"]
        rest: list[str] = list(args["args"])
        root = Path(os.path.realpath(ctx.project_root))
        check_arguments(sub, rest, root)
        read_only = self.risk_for(args) == "read"
        changes = env_changes(read_only=read_only)
        env = tool_env(changes, self.pass_env)
        await _check_repository(root)
        keys = await configured_keys(str(root), env)
        if sub in ("diff", "log", "show"):
            rest = [*_NO_PROGRAMS, *rest]
        elif sub == "stash" and rest[:1] == ["show"]:
            rest = ["show", *_NO_PROGRAMS, *rest[1:]]
        argv = ["git", *overrides(keys, read_only=read_only, work_tree=str(root)), sub, *rest]
        outcome = await run_process(
            argv,
            cwd=root,
            timeout=self.timeout,
            max_output_bytes=self.max_output_bytes,
            ctx=ctx,
            label=f"git {sub}",
            extra_env=changes,
            pass_env=self.pass_env,
        )
        text = outcome.output.rstrip("\n")
        if outcome.timed_out:
            raise ToolError(f"git {sub} did not finish within {self.timeout:g} s")
        if outcome.exit_code != 0:
            hint = ""
            if "not a git repository" in text:
                hint = " The project is not a git repository (run `git init` via shell first)."
            raise ToolError(f"git {sub} failed (exit code {outcome.exit_code}):\n{text}{hint}")
        return ToolResult(text or f"(git {sub}: no output)", metadata={"subcommand": sub})


async def _check_repository(root: Path) -> None:
    """Refuse when the repository git would use lies in one of Loom's own folders (a
    `.git` file the agent wrote can point anywhere; the checkpoint store is a git
    repository too). A plain `.git` folder in the project needs no look."""
    dot_git = root / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return
    from loom.paths import LoomPaths

    found = await run_git_async(
        root, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"
    )
    if found.returncode != 0:
        return  # not a repository: the call itself says so
    paths = LoomPaths.from_env()
    looms = [os.path.realpath(p) for p in (paths.data, paths.state, paths.cache, paths.config)]
    for line in found.stdout.decode("utf-8", "replace").splitlines():
        where = os.path.realpath(line.strip())
        if any(where == top or where.startswith(top + os.sep) for top in looms):
            raise ToolError(
                f"git here would use the repository at {where}, inside Loom's own folders "
                "(a .git file points there); refused. Ask the person to check the "
                "project's .git"
            )
