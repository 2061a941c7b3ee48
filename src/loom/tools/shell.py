"""`shell`: run a command in the project root with a timeout and an output cap."""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loom.tools._builtin import BuiltinTool, schema
from loom.tools._process import run_process
from loom.tools.base import ToolContext, ToolError, ToolResult

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_TIMEOUT_S = 600.0
DEFAULT_MAX_OUTPUT_BYTES = 30_000


def _shell() -> str:
    return "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"


def describe_exit(code: int | None, timed_out: bool, timeout: float) -> str:
    if timed_out:
        return f"[timed out after {timeout:g} s; the command and its children were stopped]"
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"[killed by {name}]"
    return f"[exit code {code}]"


class Shell(BuiltinTool):
    name = "shell"
    risk = "execute"
    subject_kind = "command"

    def __init__(
        self,
        project_root: Path | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_timeout: float = DEFAULT_MAX_TIMEOUT_S,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        pass_env: Sequence[str] = (),
    ) -> None:
        super().__init__(project_root)
        self.pass_env = tuple(pass_env)  # secret variables the person lets commands see
        self.timeout = timeout
        self.max_timeout = max(max_timeout, timeout)
        self.max_output_bytes = max_output_bytes
        self.description = (
            "Run a shell command (bash) in the project root and return its combined "
            f"stdout/stderr and exit code. Default timeout {timeout:g} s (at most "
            f"{self.max_timeout:g} s); output over {max_output_bytes:,} bytes keeps its "
            "beginning and end. No input can be typed: use non-interactive flags."
        )
        self.parameters = schema(
            {
                "command": {"type": "string", "minLength": 1, "description": "The command."},
                "timeout": {
                    "type": "number",
                    "minimum": 1,
                    "maximum": self.max_timeout,
                    "description": f"Seconds before it is stopped (default {timeout:g}).",
                },
            },
            required=("command",),
        )

    def permission_subject(self, args: dict[str, Any]) -> str | None:
        command = args.get("command") if isinstance(args, dict) else None
        return command if isinstance(command, str) else None

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command: str = args["command"]
        if not command.strip():
            raise self.fail("the command is empty")
        timeout = float(args.get("timeout") or self.timeout)
        root = Path(os.path.realpath(ctx.project_root))
        if not root.is_dir():
            raise ToolError(f"the project root {root} is not a folder")
        outcome = await run_process(
            [_shell(), "-c", command],
            cwd=root,
            timeout=timeout,
            max_output_bytes=self.max_output_bytes,
            ctx=ctx,
            label=command[:80],
            pass_env=self.pass_env,
        )
        body = outcome.output.rstrip("\n") or "(no output)"
        status = describe_exit(outcome.exit_code, outcome.timed_out, timeout)
        return ToolResult(
            f"{body}\n{status}",
            is_error=outcome.timed_out or outcome.exit_code != 0,
            metadata={
                "exit_code": outcome.exit_code,
                "timed_out": outcome.timed_out,
                "output_bytes": outcome.total_bytes,
                "omitted_bytes": outcome.omitted_bytes,
            },
        )
