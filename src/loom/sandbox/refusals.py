"""Tell the model plainly when a failed command was (probably) stopped by the sandbox,
so it asks the person instead of retrying. The command's own output and exit code are
left as they are; this is one extra line after them."""

from __future__ import annotations

import os
import re
from pathlib import Path

from loom.sandbox.policy import SandboxPolicy

# What programs print when the kernel refuses them inside the sandbox.
WRITE_MARKERS = ("Read-only file system", "EROFS")
FILE_SIZE_MARKERS = ("File size limit exceeded", "File too large", "EFBIG")
PROCESS_MARKERS = ("fork: Resource temporarily unavailable", "fork: retry", "EAGAIN")
NETWORK_MARKERS = (
    "Network is unreachable",
    "ENETUNREACH",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Could not resolve host",
    "getaddrinfo failed",
    "nodename nor servname provided",
    "Connection refused",
    "ECONNREFUSED",
)


def explain_refusal(policy: SandboxPolicy, output: str, failed: bool) -> str | None:
    """One line for the model when `output` shows the sandbox refused a write or the
    network; None when nothing points at the sandbox."""
    if not failed:
        return None
    reasons: list[str] = []
    if any(marker in output for marker in WRITE_MARKERS):
        writable = ", ".join(str(path) for path in policy.writable_paths())
        reasons.append(
            "the sandbox refused a write outside the writable folders "
            f"({writable}; the repository's .git and the project's .loom.toml, .mcp.json "
            "and .loom/ stay read-only: commit with the git tool, edit those with "
            "file_write). "
            "The person can add a folder to `[sandbox] writable` in their Loom config"
        )
    hidden_temp = out_of_view(policy, output)
    if hidden_temp is not None:
        reasons.append(
            f"{hidden_temp} is in the machine's shared temp folder, which commands do not "
            "see: in the sandbox /tmp ($TMPDIR) is this session's own. The person can "
            "add a folder there to `[sandbox] writable` in their Loom config"
        )
    if not policy.network and any(marker in output for marker in NETWORK_MARKERS):
        reasons.append(
            "network access is off in the sandbox (no connections, not even to "
            "localhost services, and no DNS). If the command truly needs it, call shell "
            "again with `network: true` and the person is asked; or they can set "
            "`[sandbox] network = true` in their Loom config"
        )
    limits = policy.limits
    if limits.max_file_mb is not None and any(m in output for m in FILE_SIZE_MARKERS):
        reasons.append(
            f"the sandbox caps each file at {limits.max_file_mb} MB "
            "(`[sandbox] max_file_mb` in the person's config)"
        )
    if limits.max_processes is not None and any(m in output for m in PROCESS_MARKERS):
        reasons.append(
            f"the sandbox caps a command at {limits.max_processes} processes "
            "(`[sandbox] max_processes`)"
        )
    if not reasons:
        return None
    return (
        "[sandbox: "
        + "; ".join(reasons)
        + " (or run Loom with --no-sandbox). Retrying the same command will fail the "
        "same way: ask the person, or do the work inside the project.]"
    )


_TEMP_PATH = re.compile(r"/tmp/[^\s:'\"`]+")
MISSING_MARKERS = ("No such file or directory", "ENOENT")


def out_of_view(policy: SandboxPolicy, output: str) -> str | None:
    """A path of the shared /tmp that a failed command could not find because the
    sandbox's /tmp is the session's own (it is there outside the sandbox)."""
    if not any(marker in output for marker in MISSING_MARKERS):
        return None
    writable = policy.writable_paths()
    for match in _TEMP_PATH.finditer(output):
        path = Path(match.group(0))
        if any(root == path or root in path.parents for root in writable):
            continue
        if os.path.lexists(path) or (len(path.parts) > 3 and os.path.isdir(path.parent)):
            return str(path)
    return None


def swept_note(taken: list[str], quarantine: Path | None) -> str:
    """What the model is told when files a command may not create were taken away."""
    where = f"moved to {quarantine}" if quarantine is not None else "deleted"
    return (
        "[sandbox: a command may not create or change .loom.toml, .mcp.json, anything "
        "in a .loom/ folder or git's hooks folder (Loom or git would act on them outside "
        "the sandbox), so these were "
        f"{where}: {', '.join(taken)}. To change Loom's files, use file_write: it asks "
        "the person.]"
    )
