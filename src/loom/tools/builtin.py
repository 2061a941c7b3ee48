"""The base class of the built-in tools, public for every package that gives tools the
way `loom.tools` does (lsp, repointel, decisions, delegation): schema checking, path
confinement, subjects, and the helpers such a tool needs (`schema`, `resolve`,
`open_confined`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from loom.tools._paths import confine, lexical_path, open_confined, subject_path
from loom.tools._protected import protected_reason
from loom.tools._schema import usage, validate_args
from loom.tools.base import Risk, SubjectKind, ToolContext, ToolError, ToolResult
from loom.tools.presentation import ToolKind, ToolPresentation, plain_presentation

__all__ = ["BuiltinTool", "open_confined", "resolve", "schema"]


class BuiltinTool:
    """Subclasses set the class attributes and implement `execute(args, ctx)`.

    `run` validates the arguments against `parameters` first, so `execute` gets clean,
    typed arguments with defaults filled in. `project_root` (given at construction) is
    what `permission_subject` normalizes paths against; `run` confines paths to
    `ctx.project_root`, which the session sets to the same folder.
    """

    name: str
    description: str  # set on the class; a tool may word it per instance (shell)
    parameters: dict[str, Any]
    risk: Risk  # subclasses annotate theirs (`risk: Risk = "read"`) to keep the literal
    subject_kind: ClassVar[SubjectKind] = "exact"
    kind: ClassVar[ToolKind] = "other"  # how faces show it (ACP's kinds); see present()

    def __init__(self, project_root: Path | None = None) -> None:
        self.project_root = Path(project_root or Path.cwd()).resolve()

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        clean = validate_args(self.name, self.parameters, args)
        return await self.execute(clean, ctx)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError

    def permission_subject(self, args: dict[str, Any]) -> str | None:
        if self.subject_kind == "path" and isinstance(args, dict):
            return subject_path(self.project_root, args.get("path", "."))
        return None

    def protected_reason(self, args: dict[str, Any]) -> str | None:
        """Why writing this call's path always asks (`_protected.py`), checked on the path
        as written and as resolved, or None. Read by the permission policy."""
        if self.subject_kind != "path" or self.risk == "read" or not isinstance(args, dict):
            return None
        raw = args.get("path")
        for rel in (lexical_path(self.project_root, raw), subject_path(self.project_root, raw)):
            reason = protected_reason(self.project_root, rel) if rel else None
            if reason:
                return f"{rel}: {reason}"
        return None

    def present(self, args: dict[str, Any]) -> ToolPresentation:
        """How a call is shown (loom.tools.presentation); subclasses give better titles."""
        return plain_presentation(self.name, args, self.kind, self.title(args))

    def title(self, args: dict[str, Any]) -> str:
        return self.name

    def usage(self) -> str:
        return usage(self.name, self.parameters)

    def fail(self, message: str) -> ToolError:
        return ToolError(f"{message} (usage: {self.usage()})")


def resolve(ctx: ToolContext, raw: str) -> tuple[Path, str]:
    return confine(ctx.project_root, raw)


def schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    # No `"additionalProperties": false` and no empty `required`: every spec is sent with
    # every request, and validate_args refuses unknown arguments unless a schema opens them.
    spec: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        spec["required"] = list(required)
    return spec
