"""Tool descriptors for permission-policy tests: only the attributes the policy reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class StubTool:
    """A tool descriptor: only the attributes the policy reads."""

    name: str
    risk: str
    subject_kind: str = "exact"

    def permission_subject(self, args: dict[str, Any]) -> str | None:
        if self.subject_kind == "command":
            return args["command"]
        return args.get("path") or args.get("subject")


SHELL = StubTool("shell", "execute", "command")
WRITE = StubTool("file_write", "write", "path")
READ = StubTool("file_read", "read", "path")
GIT = StubTool("git", "write", "exact")
