"""Markdown files with a YAML frontmatter block, as agents and skills are written:

    ---
    name: reviewer
    description: Reviews a diff for bugs
    tools: file_read, content_search
    ---
    You review code. ...

`split_frontmatter(text)` returns the fields and the body, or raises FrontmatterError
saying what is wrong (no block, YAML that does not parse, not a mapping). YAML is read
with `safe_load` (plain data only, never objects), from files that are size-capped.
"""

from __future__ import annotations

import re
from typing import Any

MAX_FILE_BYTES = 64_000


class FrontmatterError(ValueError):
    """The file has no usable frontmatter; the message says what to fix."""


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise FrontmatterError(
            "no frontmatter: the file must start with a line '---', then 'name:' and "
            "'description:' lines, then '---'"
        )
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        raise FrontmatterError("the frontmatter is not closed: add a line '---' after it")
    import yaml

    block = lines[1:end]
    try:
        fields = yaml.safe_load("\n".join(block)) or {}
    except yaml.YAMLError as exc:
        # `description: Cut a release: tag, upload` is not YAML (an unquoted ': '), yet
        # such files are common: read plain `key: value` lines before giving up
        fields = _plain_lines(block)
        if fields is None:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 2})" if mark is not None else ""
            problem = getattr(exc, "problem", None) or "not YAML"
            raise FrontmatterError(f"the frontmatter is not valid YAML{where}: {problem}") from None
    if not isinstance(fields, dict):
        raise FrontmatterError("the frontmatter must be 'key: value' lines")
    return {str(k): v for k, v in fields.items()}, "\n".join(lines[end + 1 :]).strip()


_PLAIN = re.compile(r"^([A-Za-z_][\w-]*):(?:\s+(.*))?$")


def _plain_lines(block: list[str]) -> dict[str, Any] | None:
    """`key: value` lines (indented lines continue the value); None when a line is
    neither, or a value opens a YAML structure that failed to parse."""
    fields: dict[str, Any] = {}
    key = None
    for line in block:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _PLAIN.match(line)
        if match and not line[0].isspace():
            key, value = match.group(1), (match.group(2) or "").strip()
            if value.startswith(("[", "{", "|", ">", "'", '"')):
                return None
            fields[key] = value
        elif key is not None and line[0].isspace():
            fields[key] = f"{fields[key]} {line.strip()}".strip()
        else:
            return None
    return fields


def text_field(fields: dict[str, Any], key: str, limit: int = 1024) -> str:
    """A field as one trimmed line of text ("" when missing), at most `limit` chars."""
    value = fields.get(key)
    if value is None:
        return ""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def list_field(fields: dict[str, Any], key: str) -> list[str] | None:
    """`tools: a, b` or `tools: [a, b]` as a list; None when the key is missing."""
    value = fields.get(key)
    if value is None:
        return None
    items = value if isinstance(value, list) else str(value).split(",")
    return [str(item).strip() for item in items if str(item).strip()]
