"""Skills: folders holding a `SKILL.md` (frontmatter `name`, `description`; a body of
instructions) and whatever files it refers to.

    .loom/skills/NAME/SKILL.md            the project's (read confined to the project)
    .claude/skills/NAME/SKILL.md          the same, where other agents keep them
    .agents/skills/NAME/SKILL.md
    $XDG_CONFIG_HOME/loom/skills/NAME/SKILL.md   the person's own

Only names and descriptions reach the model up front (`listing`, bounded); the `skill`
tool loads a body when the model decides it needs it. The first place that defines a
name wins (the project's folders before the person's); a clash is reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from loom.delegation._files import NotReadable, Place
from loom.delegation.agents import NAME_RE
from loom.delegation.frontmatter import FrontmatterError, split_frontmatter, text_field

SKILL_FILE = "SKILL.md"
LISTING_MAX_CHARS = 6_000  # the up-front list (~1,500 tokens); more skills: names only
DESCRIPTION_MAX_CHARS = 300
MORE = "More skills (by name): "
COUNT = " ... and {} more (call skill with any name to list them all)"


@dataclass(frozen=True)
class SkillDefinition:
    name: str
    description: str
    place: Place
    folder: str  # the skill's folder name inside `place`

    @property
    def source(self) -> str:
        return self.place.source

    @property
    def label(self) -> str:
        return f"{self.place.label}/{self.folder}/{SKILL_FILE}"

    def body(self) -> str:
        """The instructions (SKILL.md without its frontmatter); NotReadable, or
        FrontmatterError when the file changed since it was listed."""
        _fields, body = split_frontmatter(self.place.read(f"{self.folder}/{SKILL_FILE}"))
        return body

    def files(self, limit: int = 50) -> list[str]:
        """Files and folders beside SKILL.md (one level), for the model to read."""
        found: list[str] = []
        sub = Place(self.place.root, f"{self.place.folder}/{self.folder}", self.place.source,
                    f"{self.place.label}/{self.folder}")  # fmt: skip
        for entry in sub.entries():
            if entry == SKILL_FILE or entry.startswith("."):
                continue
            found.append(f"{entry}/" if sub.is_folder(entry) else entry)
        return found[:limit]

    def read_file(self, rel: str) -> str:
        """A file of the skill's folder; ValueError for a path leaving it."""
        parts = Path(rel).parts
        if not rel or Path(rel).is_absolute() or ".." in parts:
            raise ValueError(f"{rel!r} is not a file inside the skill's folder")
        return self.place.read(f"{self.folder}/{rel}")


@dataclass
class SkillCatalog:
    skills: dict[str, SkillDefinition] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def get(self, name: str) -> SkillDefinition | None:
        return self.skills.get(name)

    def listing(self, max_chars: int = LISTING_MAX_CHARS) -> str:
        """`- name: description` lines, then the other skills by name, all within
        `max_chars`: as many descriptions as leave room for every other name; when even
        the names do not fit, as many as fit and a count (an unknown name lists them)."""
        skills = list(self.skills.values())
        lines = [f"- {skill.name}: {skill.description}" for skill in skills]
        # names_after[i]: the length of "More skills (by name): a, b" for skills[i:]
        names_after = [0] * (len(skills) + 1)
        for i in range(len(skills) - 1, -1, -1):
            after = names_after[i + 1]
            names_after[i] = (after + 2 if after else len(MORE)) + len(skills[i].name)
        described, used = 0, 0  # used: the description lines so far, with their newlines
        for i, line in enumerate(lines):
            rest = names_after[i + 1]
            if used + len(line) + (1 + rest if rest else 0) > max_chars:
                break
            described, used = i + 1, used + len(line) + 1
        rest = names_after[described]
        if not rest or used + rest <= max_chars:
            more = [MORE + ", ".join(s.name for s in skills[described:])] if rest else []
            return "\n".join([*lines[:described], *more])
        names: list[str] = []  # even the names alone do not fit: as many as do
        length = len(MORE)
        for skill in skills:
            left = len(skills) - len(names) - 1
            if length + len(skill.name) + 2 + len(COUNT.format(left)) > max_chars:
                break
            names.append(skill.name)
            length += len(skill.name) + 2
        return MORE + ", ".join(names) + COUNT.format(len(skills) - len(names))


def skill_places(project_root: Path, config_dir: Path) -> list[Place]:
    return [
        Place(project_root, ".loom/skills", "project", ".loom/skills"),
        Place(project_root, ".claude/skills", "project", ".claude/skills"),
        Place(project_root, ".agents/skills", "project", ".agents/skills"),
        Place(config_dir, "skills", "user", "~/.config/loom/skills"),
    ]


def discover_skills(project_root: Path, config_dir: Path) -> SkillCatalog:
    catalog = SkillCatalog()
    for place in skill_places(project_root, config_dir):
        for entry in place.entries():
            if entry.startswith("."):
                continue
            if place.leads_outside(entry):
                catalog.problems.append(
                    f"{place.label}/{entry}/{SKILL_FILE} leads outside the project (a "
                    "symlink); not read"
                )
                continue
            if not place.is_folder(entry):
                continue
            try:
                skill = parse_skill(place, entry)
            except FileNotFoundError:
                continue  # a folder without SKILL.md is not a skill
            except (FrontmatterError, NotReadable, ValueError) as exc:
                catalog.problems.append(f"{place.label}/{entry}/{SKILL_FILE}: {exc}; skipped")
                continue
            earlier = catalog.skills.get(skill.name)
            if earlier is not None:
                catalog.problems.append(
                    f"skill {skill.name!r} is defined twice: {earlier.label} is used, "
                    f"{skill.label} is not; rename one of them"
                )
                continue
            catalog.skills[skill.name] = skill
    return catalog


def parse_skill(place: Place, folder: str) -> SkillDefinition:
    fields, body = split_frontmatter(place.read(f"{folder}/{SKILL_FILE}"))
    name = text_field(fields, "name", 64) or folder
    if not NAME_RE.match(name):
        raise ValueError(
            f"name {name!r} is not a skill name (lowercase letters, digits, '-' and '_')"
        )
    description = text_field(fields, "description", DESCRIPTION_MAX_CHARS)
    if not description:
        raise ValueError("no 'description:' (the model decides to load a skill by it)")
    if not body:
        raise ValueError("the body (the skill's instructions, after the frontmatter) is empty")
    return SkillDefinition(name, description, place, folder)
