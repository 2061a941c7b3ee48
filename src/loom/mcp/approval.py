"""The approval question `loom mcp serve` sends its client (MCP elicitation): the whole
call, or a refusal when the whole call cannot be shown.

A client shows the question as it likes (a dialog, one line cut to fit), so the text is
made to be read: the arguments as JSON (newlines, tabs and control characters come out
as escapes), every long run of spaces written as a count (`⟨420 spaces⟩`, so no tail
hides past the edge of a dialog), every invisible or direction-changing character
named by its code point; and a call whose question would still be longer than
MAX_QUESTION_CHARS is refused, never cut.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_QUESTION_CHARS = 4000
LONG_SPACES = 8  # a run of more spaces than this is written as a count
_MARKS = "⟨⟩"
_SPACES = re.compile(" {" + str(LONG_SPACES + 1) + ",}")


@dataclass(frozen=True)
class Question:
    text: str | None  # what to ask, or None when the call cannot be shown whole
    refusal: str = ""  # why not


def approval_question(name: str, args: dict[str, Any], reason: str) -> Question:
    """The question for a call of tool `name` with `args` that asks because of `reason`."""
    shown = _visible(json.dumps(args, ensure_ascii=False, sort_keys=True))
    text = f"Loom: allow {name} {shown}? ({reason})"
    if len(text) > MAX_QUESTION_CHARS:
        return Question(
            None,
            f"the call is too long to show whole in an approval question ({len(text)} "
            f"characters, at most {MAX_QUESTION_CHARS})",
        )
    return Question(text)


def _visible(text: str) -> str:
    # The marks' own brackets are named too, so no text can pass for a mark.
    text = "".join(_named(ch) if _hidden(ch) or ch in _MARKS else ch for ch in text)
    return _SPACES.sub(lambda run: f"⟨{len(run.group())} spaces⟩", text)


def _hidden(ch: str) -> bool:
    """Shown as nothing, as something else, or changing the order of what follows:
    format characters (zero-width, bidi), separators other than the plain space,
    unassigned and private-use code points (Python's "not printable")."""
    return not ch.isprintable()


def _named(ch: str) -> str:
    return f"⟨U+{ord(ch):04X}⟩"
