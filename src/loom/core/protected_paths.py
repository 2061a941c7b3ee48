"""Paths whose content decides what Loom or git will run (pure: names only).

`loom.tools._protected` adds the folder `core.hooksPath` names; the permission policy
makes every write to these ask, and a shell grant never covers a command naming them.
"""

from __future__ import annotations

GIT_REASON = (
    "it is inside .git/, where git keeps its configuration and hooks: a change there can "
    "make git run programs"
)
NAME_REASONS = {
    ".loom.toml": "it is Loom's project configuration (auto-approvals, language servers "
    "and tools Loom starts)",
    ".mcp.json": "it lists MCP servers Loom starts",
    ".gitattributes": "it chooses the filter and diff programs git runs on files",
    ".gitmodules": "it tells git which repositories to fetch and check out as submodules",
}


def path_reason(path: str) -> str | None:
    """Why writing `path` (relative, `/`-separated) always asks, from its names alone."""
    parts = [p.casefold() for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts:
        return None
    if ".git" in parts:
        return GIT_REASON
    return NAME_REASONS.get(parts[-1])
