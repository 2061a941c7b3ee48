"""`shell`: run a command in the project root with a timeout and an output cap."""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loom import defaults
from loom.tools._launcher import (
    CommandLauncher,
    explain_sandbox_refusal,
    network_launcher,
    offers_network_requests,
    sandbox_note_for_model,
    sandbox_status,
)
from loom.tools._process import run_process
from loom.tools.background import BackgroundCommands, describe
from loom.tools.base import Risk, ToolContext, ToolError, ToolResult
from loom.tools.builtin import BuiltinTool, schema
from loom.tools.presentation import one_line

DEFAULT_TIMEOUT_S = defaults.SHELL_TIMEOUT_S
DEFAULT_MAX_TIMEOUT_S = 600.0
DEFAULT_MAX_OUTPUT_BYTES = defaults.SHELL_MAX_OUTPUT_BYTES
MAX_COMMAND_BYTES = 128 * 1024


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
    risk: Risk = "execute"
    subject_kind = "command"
    kind = "execute"

    def title(self, args: dict[str, Any]) -> str:
        command = args.get("command")
        return f"Run `{one_line(command)}`" if isinstance(command, str) and command else "shell"

    def __init__(
        self,
        project_root: Path | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_timeout: float = DEFAULT_MAX_TIMEOUT_S,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        pass_env: Sequence[str] = (),
        launcher: CommandLauncher | None = None,
        background: BackgroundCommands | None = None,
    ) -> None:
        super().__init__(project_root)
        self.background = background  # the session's background commands, or None
        self.pass_env = tuple(pass_env)  # secret variables the person lets commands see
        self.launcher = launcher  # the sandbox (loom.sandbox.Sandbox), or None
        self.timeout = timeout
        self.max_timeout = max(max_timeout, timeout)
        self.max_output_bytes = max_output_bytes
        self.description = (
            "Run bash in the project root: output (middle cut past "
            f"{max_output_bytes:,} bytes) and exit code. No stdin: use non-interactive flags."
            + sandbox_note_for_model(launcher)
        )
        properties: dict[str, Any] = {
            "command": {"type": "string", "minLength": 1},
            "timeout": {
                "type": "number",
                "minimum": 1,
                "maximum": self.max_timeout,
                "description": f"Seconds (default {timeout:g}).",
            },
        }
        if background is not None:
            properties["background"] = {
                "type": "boolean",
                "default": False,
                "description": "Answer at once with its id; see shell_output, shell_kill.",
            }
        if offers_network_requests(launcher):
            properties["network"] = {
                "type": "boolean",
                "default": False,
                "description": "Ask the person for network for this command.",
            }
        self.parameters = schema(properties, required=("command",))

    def permission_subject(self, args: dict[str, Any]) -> str | None:
        command = args.get("command") if isinstance(args, dict) else None
        return command if isinstance(command, str) else None

    def sandbox_status(self, args: dict[str, Any] | None = None) -> tuple[bool, str]:
        """(runs sandboxed, a short text) for the permission prompt."""
        wants_network = isinstance(args, dict) and args.get("network") is True
        return sandbox_status(network_launcher(self.launcher, wants_network))

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command: str = args["command"]
        if not command.strip():
            raise self.fail("the command is empty")
        if len(command.encode("utf-8", "surrogatepass")) >= MAX_COMMAND_BYTES:
            # the kernel refuses one argument this long (MAX_ARG_STRLEN, 128 KiB)
            raise self.fail(
                f"the command is {len(command):,} characters, over what one command can be "
                f"({MAX_COMMAND_BYTES:,} bytes); write a script with file_write and run that"
            )
        timeout = float(args.get("timeout") or self.timeout)
        root = Path(os.path.realpath(ctx.project_root))
        if not root.is_dir():
            raise ToolError(f"the project root {root} is not a folder")
        launcher = network_launcher(self.launcher, bool(args.get("network")))
        if args.get("background") is True and self.background is not None:
            job = await self.background.start(
                command, [_shell(), "-c", command], cwd=root, launcher=launcher,
                pass_env=self.pass_env,
            )  # fmt: skip
            return ToolResult(
                f"id: {job.id}\n{describe(job)}\nRead its output with shell_output "
                f"(id {job.id}); end it with shell_kill.",
                metadata={"background_id": job.id},
            )
        outcome = await run_process(
            [_shell(), "-c", command],
            cwd=root,
            timeout=timeout,
            max_output_bytes=self.max_output_bytes,
            ctx=ctx,
            label=command[:80],
            pass_env=self.pass_env,
            launcher=launcher,
        )
        body = outcome.output.rstrip("\n") or "(no output)"
        status = describe_exit(outcome.exit_code, outcome.timed_out, timeout)
        failed = outcome.timed_out or outcome.exit_code != 0
        refusal = explain_sandbox_refusal(launcher, outcome.output, failed)
        notes = "".join(f"\n{note}" for note in outcome.notes)
        return ToolResult(
            f"{body}\n{status}" + (f"\n{refusal}" if refusal else "") + notes,
            is_error=failed,
            metadata={
                "exit_code": outcome.exit_code,
                "timed_out": outcome.timed_out,
                "output_bytes": outcome.total_bytes,
                "omitted_bytes": outcome.omitted_bytes,
                "sandboxed": sandbox_status(launcher)[0],
                "sandbox_refused": refusal is not None,
            },
        )
