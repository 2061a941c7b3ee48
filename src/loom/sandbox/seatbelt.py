"""macOS: run agent commands under `sandbox-exec` with a generated Seatbelt profile.

The profile allows everything, then denies file writes outside the writable folders
(and on the protected project paths), reads and writes in Loom's own folders, and all
network use when the network is off.
Paths never appear in the profile text: each is passed as a `-D NAME=PATH` parameter
and read with `(param "NAME")`, so no path needs quoting or escaping. Later rules win
in Seatbelt, hence deny-all-writes first, then the writable folders, then the
protected paths.

This backend cannot be run on Linux; tests check the profile text and the argv.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from loom.sandbox.policy import SandboxPolicy

NAME = "seatbelt"
SANDBOX_EXEC = "/usr/bin/sandbox-exec"

# Device files every command may write: the null sink, terminals, descriptors.
_DEVICE_RULES = (
    '(literal "/dev/null")',
    '(literal "/dev/zero")',
    '(literal "/dev/dtracehelper")',
    '(regex #"^/dev/tty")',
    '(regex #"^/dev/fd/")',
)


def profile_parameters(policy: SandboxPolicy) -> dict[str, str]:
    """WRITABLE_0.., HIDDEN_0.. and PROTECTED_0.., the values the profile refers to; the
    session's temp folder is the last writable one."""
    writable = policy.writable_paths()
    if policy.temp is not None:
        writable.append(policy.temp)
    params = {f"WRITABLE_{i}": str(path) for i, path in enumerate(writable)}
    for i, path in enumerate(policy.hidden_paths()):
        params[f"HIDDEN_{i}"] = str(path)
    for i, path in enumerate(policy.protected_paths()):
        params[f"PROTECTED_{i}"] = str(path)
    return params


def seatbelt_profile(policy: SandboxPolicy) -> str:
    params = profile_parameters(policy)
    writable = [f'(subpath (param "{name}"))' for name in params if name.startswith("WRITABLE")]
    protected = [f'(subpath (param "{n}"))' for n in params if n.startswith("PROTECTED")]
    hidden = [f'(subpath (param "{n}"))' for n in params if n.startswith("HIDDEN")]
    lines = [
        "(version 1)",
        "; Loom sandbox: reads allowed, writes only in the writable folders.",
        "(allow default)",
        "(deny file-write*)",
        "(allow file-write*",
        *(f"    {rule}" for rule in (*writable, *_DEVICE_RULES)),
        ")",
    ]
    if hidden:  # Loom's own folders: neither read nor written
        lines += ["(deny file-read* file-write*", *(f"    {rule}" for rule in hidden), ")"]
    if protected:
        lines += ["(deny file-write*", *(f"    {rule}" for rule in protected), ")"]
    if not policy.network:
        lines += ["; network off", "(deny network*)"]
    return "\n".join(lines) + "\n"


def temp_environment(policy: SandboxPolicy) -> list[str]:
    """`env TMPDIR=...` before the command: Seatbelt cannot mount, so the session's temp
    folder is named where it is (the shared temp folders are not writable; a tool that
    asks macOS for its per-user temp folder instead of reading $TMPDIR gets a refusal)."""
    if policy.temp is None:
        return []
    temp = str(policy.temp)
    return ["/usr/bin/env", *(f"{name}={temp}" for name in ("TMPDIR", "TMP", "TEMP"))]


class Seatbelt:
    name = NAME
    version = ""

    def __init__(self, executable: str = SANDBOX_EXEC) -> None:
        self.executable = executable

    def wrap(
        self, policy: SandboxPolicy, argv: Sequence[str], cwd: Path
    ) -> tuple[list[str], tuple[int, ...]]:
        args = [self.executable, "-p", seatbelt_profile(policy)]
        for name, value in profile_parameters(policy).items():
            args += ["-D", f"{name}={value}"]
        return [*args, "--", *temp_environment(policy), *argv], ()

    def enforced(self, policy: SandboxPolicy) -> list[str]:
        network = "on" if policy.network else "off (all network use denied)"
        return [
            "files: writes denied outside the writable folders (Seatbelt profile)",
            "temp: $TMPDIR is the session's own folder, removed when the session ends",
            f"network: {network}",
        ]
