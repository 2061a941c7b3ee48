"""`git`: the everyday, non-destructive git subcommands.

status, diff, log, show, branch (listing only), add, commit and stash (push, list, show,
pop, apply). Commands that throw work away (reset --hard, clean -f, checkout -- .,
push --force, stash drop/clear, branch -D, ...) are refused with a message that says why;
a person who means it can run them through `shell`, which asks first.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from loom.tools._builtin import BuiltinTool, schema
from loom.tools._launcher import CommandLauncher, explain_sandbox_refusal, sandbox_status
from loom.tools._paths import confine
from loom.tools._process import run_process
from loom.tools.base import Risk, ToolContext, ToolError, ToolResult

SUBCOMMANDS = ("status", "diff", "log", "show", "branch", "add", "commit", "stash")
STASH_ACTIONS = ("push", "list", "show", "pop", "apply")
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
_BRANCH_LIST_FLAGS = {
    "-a",
    "--all",
    "-r",
    "--remotes",
    "-v",
    "-vv",
    "--verbose",
    "--list",
    "-l",
    "--show-current",
    "--merged",
    "--no-merged",
    "--contains",
    "--sort",
    "--format",
}


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
        launcher: CommandLauncher | None = None,
    ) -> None:
        super().__init__(project_root)
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
        self._check(sub, rest, root)
        argv = ["git", "-c", "core.pager=cat", "-c", "color.ui=never", sub, *rest]
        outcome = await run_process(
            argv,
            cwd=root,
            timeout=self.timeout,
            max_output_bytes=self.max_output_bytes,
            ctx=ctx,
            label=f"git {sub}",
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

    def _check(self, sub: str, rest: list[str], root: Path) -> None:
        for arg in rest:
            if arg.startswith("--output"):
                raise ToolError(f"git {sub}: writing output to files is not allowed here")
            if arg == "--no-index":
                raise ToolError("git diff --no-index is not allowed: it reads files outside git")
        if sub == "branch":
            flags = [a for a in rest if a.startswith("-")]
            bad = [f for f in flags if f.split("=")[0] not in _BRANCH_LIST_FLAGS]
            names = [a for a in rest if not a.startswith("-")]
            if bad or (
                names
                and "--list" not in rest
                and "-l" not in rest
                and not {"--contains", "--merged", "--no-merged"} & set(rest)
            ):
                raise ToolError(
                    "git branch only lists branches here (flags: -a, -r, -v, --list PATTERN, "
                    "--show-current). Creating, renaming or deleting branches is not supported."
                )
        if sub == "stash":
            action = rest[0] if rest and not rest[0].startswith("-") else "push"
            if action not in STASH_ACTIONS:
                raise ToolError(
                    f"git stash {action} is refused: it can lose stashed work. "
                    f"Supported: stash {', '.join(STASH_ACTIONS)}."
                )
        has_message = any(
            a in ("-m", "-F", "--file") or a.startswith(("--message", "-m")) for a in rest
        )
        if sub == "commit" and not has_message:
            raise ToolError(
                'git commit needs a message: {"subcommand": "commit", '
                '"args": ["-m", "What changed and why"]}'
            )
        if sub == "add":
            for arg in rest:
                if not arg.startswith("-"):
                    confine(root, arg)  # raises for paths outside the project
