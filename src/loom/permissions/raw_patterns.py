"""Dangerous shapes found in a command's raw text, before it is parsed.

The command comes from the model, so it can be long and hostile. Every check here is
linear in its length: a pattern starts only at the beginning of a run (a word, a segment
between `|`, `;` and `&`) and commits to the first thing it finds there (atomic groups),
so a 20 KB line of `curl curl curl ...` or one 20 KB word costs one pass, not one pass per
character (the plain patterns took seconds on such lines).
"""

from __future__ import annotations

import bisect
import re

_SHELLS = r"(?:ba|z|da|k|fi|c|tc)?sh|python[0-9.]*|perl|ruby|node|php"
_DOWNLOADERS = r"curl|wget|fetch"
# A segment starts at the text's start or just after `|`, `;` or `&`.
_SEGMENT = r"(?:^|[|;&])"

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (
        # `curl URL | sh`: a downloader, then anything but an operator, then `| shell`
        re.compile(
            rf"{_SEGMENT}(?>[^|;&]*?\b(?:{_DOWNLOADERS})\b)[^|;&]*+\|"
            rf"\s*(?:sudo\s+)?(?:\S*/)?(?:{_SHELLS})\b"
        ),
        "piping a download into a shell",
    ),
    (
        # `sh <(curl URL)`, `bash -c "$(wget -O- URL)"`
        re.compile(
            rf"{_SEGMENT}(?>[^|;&]*?\b(?:{_SHELLS})\b)[^|;&]*?(?:<\(|\$\(|`)\s*(?:{_DOWNLOADERS})\b"
        ),
        "running a downloaded script",
    ),
    (re.compile(r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md)\w*"), "writing to a disk device"),
]

# A fork bomb: `NAME(){ ... NAME | NAME & ... }` (`:(){ :|:& };:`). Found in two linear
# passes (definitions, self-pipes) and matched by position, not by one backtracking regex.
_DEFINITION = re.compile(r"((?<!\w)\w+|:)\s*\(\)\s*\{")
_SELF_PIPE = re.compile(r"((?<!\w)\w+|:)\s*\|\s*\1\s*&")


def raw_reason(command: str) -> str | None:
    """Why the raw text of `command` is dangerous, or None."""
    if _fork_bomb(command):
        return "a fork bomb"
    for pattern, reason in _PATTERNS:
        if pattern.search(command):
            return reason
    return None


def _fork_bomb(command: str) -> bool:
    """A `NAME | NAME &` inside the body of a function NAME (after its `{`, before any `}`)."""
    if "{" not in command or "&" not in command:
        return False
    bodies: dict[str, list[int]] = {}  # name -> where each definition's body starts
    for definition in _DEFINITION.finditer(command):
        bodies.setdefault(definition.group(1), []).append(definition.end())
    if not bodies:
        return False
    closing = [i for i, ch in enumerate(command) if ch == "}"]
    for pipe in _SELF_PIPE.finditer(command):
        starts = bodies.get(pipe.group(1))
        if not starts:
            continue
        at = pipe.start()
        before = bisect.bisect_left(closing, at)
        last_close = closing[before - 1] if before else -1
        # a body of this name opened after the last `}` before the pipe, and before it
        first = bisect.bisect_right(starts, last_close)
        if first < len(starts) and starts[first] <= at:
            return True
    return False
