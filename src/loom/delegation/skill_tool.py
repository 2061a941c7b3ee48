"""`skill`: the model loads a skill's instructions when it decides it needs them.

Its description lists the skills (names and descriptions, bounded), so nothing more of
them costs context until one is loaded. Loading returns the body of SKILL.md and the
files beside it; `file` reads one of those (also for the person's own skills, which
lie outside the project where file_read cannot go).
"""

from __future__ import annotations

from typing import Any

from loom.delegation.frontmatter import FrontmatterError
from loom.delegation.skills import SkillCatalog
from loom.tools.base import ToolContext, ToolError, ToolResult
from loom.tools.builtin import BuiltinTool, schema

INTRO = (
    "Load a skill: instructions (and files) someone prepared for a kind of task. When a "
    "task matches a skill's description below, load it first and follow it. Call with "
    "`name` for its instructions and the list of its files; add `file` to read one of "
    "those files.\n\nSkills:\n"
)


class SkillTool(BuiltinTool):
    name = "skill"
    kind = "think"  # a loaded skill: the agent thinking aloud

    def title(self, args: dict[str, Any]) -> str:
        return f"Skill {args.get('name', '')}"

    risk = "read"  # reads files people wrote for the agent

    def __init__(self, catalog: SkillCatalog, project_root: Any = None) -> None:
        super().__init__(project_root)
        self.catalog = catalog

    @property
    def description(self) -> str:  # type: ignore[override]
        return INTRO + self.catalog.listing()

    @property
    def parameters(self) -> dict[str, Any]:  # type: ignore[override]
        return schema(
            {
                "name": {"type": "string", "description": "The skill's name."},
                "file": {
                    "type": "string",
                    "description": "A file of the skill's folder, as its listing names it.",
                },
            },
            required=("name",),
        )

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        skill = self.catalog.get(args["name"])
        if skill is None:
            names = ", ".join(self.catalog.skills) or "(none)"
            raise ToolError(f"there is no skill {args['name']!r}; the skills are: {names}")
        try:
            if args.get("file"):
                text = skill.read_file(args["file"])
                return ToolResult(f"{skill.name}/{args['file']}:\n\n{text}")
            body = skill.body()
        except FileNotFoundError:
            listing = ", ".join(skill.files()) or "(none)"
            raise ToolError(
                f"skill {skill.name!r} has no file {args.get('file') or 'SKILL.md'!r}; "
                f"its files: {listing}"
            ) from None
        except (FrontmatterError, OSError, ValueError) as exc:
            raise ToolError(f"skill {skill.name!r} cannot be read: {exc}") from None
        files = skill.files()
        text = f"# Skill: {skill.name} ({skill.label})\n\n{body}"
        if files:
            text += "\n\nFiles beside it (read with skill(name, file=...)): " + ", ".join(files)
        return ToolResult(text)
