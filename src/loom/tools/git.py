"""`git`: the everyday, non-destructive git subcommands.

status, diff, log, show, branch (listing only), add, commit and stash (push, list, show,
pop, apply). Commands that throw work away (reset --hard, clean -f, checkout -- .,
push --force, stash drop/clear, branch -D, ...) are refused with a message that says why;
a person who means it can run them through `shell`, which asks first.

Arguments go through an allowlist (`_git_args.py`) and git runs with configuration that
cannot execute programs (`loom._gitsafe`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loom._gitsafe import configured_keys, git_env_changes, safe_config_args
from loom.tools._builtin import BuiltinTool, schema
from loom.tools._git_args import check_arguments
from loom.tools._launcher import CommandLauncher, explain_sandbox_refusal, sandbox_status
from loom.tools._process import run_process, tool_env
from loom.tools.base import Risk, ToolContext, ToolError, ToolResult

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
        "Run a git subcommand in the project: status, diff, log, show, branch (list), add, "
        "commit, stash (push/list/show/pop/apply). Pass further arguments in `args`, e.g. "
        '{"subcommand": "log", "args": ["--oneline", "-5"]} or '
        '{"subcommand": "commit", "args": ["-m", "Fix the login check"]}. '
        "Destructive commands (reset --hard, clean, push, checkout -- .) are refused."
    )
    parameters = schema(
        {
            "subcommand": {"type": "string", "enum": list(SUBCOMMANDS)},
            "args": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "description": "Arguments after the subcommand.",
            },
        },
        required=("subcommand",),
    )
    risk = "write"
    subject_kind = "exact"

    def __init__(
        self,
        project_root: Path | None = None,
        *,
        timeout: float = 60.0,
        max_output_bytes: int = 30_000,
        pass_env: Sequence[str] = (),
        launcher: CommandLauncher | None = None,
    ) -> None:
        super().__init__(project_root)
        self.pass_env = tuple(pass_env)
        self.launcher = launcher  # the sandbox (loom.sandbox.Sandbox), or None
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
        return sandbox_status(self.launcher)

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
        changes = git_env_changes()
        keys = await configured_keys(str(root), tool_env(changes, self.pass_env))
        if sub in ("diff", "log", "show"):
            rest = [*_NO_PROGRAMS, *rest]
        elif sub == "stash" and rest[:1] == ["show"]:
            rest = ["show", *_NO_PROGRAMS, *rest[1:]]
        argv = ["git", *safe_config_args(keys, read_only), sub, *rest]
        outcome = await run_process(
            argv,
            cwd=root,
            timeout=self.timeout,
            max_output_bytes=self.max_output_bytes,
            ctx=ctx,
            label=f"git {sub}",
            extra_env=changes,
            pass_env=self.pass_env,
            launcher=self.launcher,
        )
        text = outcome.output.rstrip("\n")
        if outcome.timed_out:
            raise ToolError(f"git {sub} did not finish within {self.timeout:g} s")
        if outcome.exit_code != 0:
            hint = ""
            if "not a git repository" in text:
                hint = " The project is not a git repository (run `git init` via shell first)."
            refusal = explain_sandbox_refusal(self.launcher, text, failed=True)
            if refusal:
                hint += f"\n{refusal}"
            raise ToolError(f"git {sub} failed (exit code {outcome.exit_code}):\n{text}{hint}")
        return ToolResult(text or f"(git {sub}: no output)", metadata={"subcommand": sub})
