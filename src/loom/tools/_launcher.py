"""How an agent command is launched: the hook the sandbox plugs into.

`run_process(..., launcher=...)` spawns what `launcher.wrap(argv, cwd)` returns instead
of `argv`: an argv and the descriptors it refers to (passed to the child, then closed).
The launcher is duck-typed (the tools never import `loom.sandbox`); the session passes
its `loom.sandbox.Sandbox`. The helpers read what the launcher can say about itself
(`status`, `model_note`, `explain`, `with_network`), for prompts and tool results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, cast


class CommandLauncher(Protocol):
    """Turns an agent command into the argv to spawn (loom.sandbox.Sandbox: the command
    under bubblewrap / sandbox-exec, or unchanged when there is no sandbox)."""

    def wrap(self, argv: Sequence[str], cwd: Path) -> tuple[list[str], tuple[int, ...]]: ...


def _nothing_after() -> list[str]:
    return []


# what a sandbox's `launch(argv, cwd)` gives: argv, descriptors, what to call after
SandboxLaunch = tuple[list[str], tuple[int, ...], Callable[[], list[str]]]


@dataclass
class Launch:
    """One command's launch: what to spawn, and what to do once it is over (`finish`:
    the sandbox's clean-up and checks; it returns notes for the model)."""

    argv: list[str]
    fds: tuple[int, ...] = ()
    finish: Callable[[], list[str]] = field(default=_nothing_after)


def start_launch(argv: Sequence[str], cwd: Path, launcher: CommandLauncher | None) -> Launch:
    """The launch of `argv`: the launcher's own `launch` when it has one (the sandbox:
    argv, descriptors, what to call after), else its `wrap`."""
    launch = getattr(launcher, "launch", None)
    if callable(launch):
        wrapped, fds, finish = cast(SandboxLaunch, launch(argv, cwd))
        return Launch(wrapped, fds, finish)
    wrapped, fds = launch_argv(argv, cwd, launcher)
    return Launch(wrapped, fds)


def launch_argv(
    argv: Sequence[str], cwd: Path, launcher: CommandLauncher | None
) -> tuple[list[str], tuple[int, ...]]:
    """(argv to spawn, descriptors to pass; the caller closes them once spawned)."""
    return (list(argv), ()) if launcher is None else launcher.wrap(argv, cwd)


# What the launcher says, when it is a sandbox (duck-typed: `status`, `model_note`,
# `explain`); the shell and git tools pass it on to prompts and results.


def sandbox_status(launcher: CommandLauncher | None) -> tuple[bool, str]:
    status = getattr(launcher, "status", None)
    if callable(status):
        sandboxed, text = cast(tuple[bool, str], status())
        return sandboxed, text
    return False, "runs without a sandbox"


def sandbox_note_for_model(launcher: CommandLauncher | None) -> str:
    note = getattr(launcher, "model_note", None)
    text = note() if callable(note) else ""
    return f" {text}" if text else ""


def offers_network_requests(launcher: CommandLauncher | None) -> bool:
    """The sandbox keeps the network off, and one command may ask to have it."""
    return bool(getattr(launcher, "network_requestable", False))


def network_launcher(launcher: CommandLauncher | None, wanted: bool) -> CommandLauncher | None:
    """The launcher for a command that asked for the network (approved by a person):
    the same sandbox with the network on, for that command alone."""
    with_network = getattr(launcher, "with_network", None)
    if wanted and callable(with_network):
        return cast(CommandLauncher, with_network())
    return launcher


def explain_sandbox_refusal(
    launcher: CommandLauncher | None, output: str, failed: bool
) -> str | None:
    explain = getattr(launcher, "explain", None)
    return cast("str | None", explain(output, failed)) if callable(explain) else None
