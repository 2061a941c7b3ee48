"""Fetching the repo map for a model call: focus from the conversation, off the loop.

The map ranks the project's symbols around what the conversation is about: files named
in recent tool calls (`path`-like arguments; already in the conversation, so the map
spends its budget on what they use) and what the user mentioned: identifiers
(snake_case, CamelCase, dotted names) and file names (`calc.py`, `@src/calc.py`), which
rank first in the map and are never left out of it for being in the conversation.
Building it can scan and parse files, so it runs in a worker thread with a time limit; a
slow or broken map is skipped for that call, never an error for the turn. Reading the focus
out of the messages runs there too: a pasted 100 KB log is text to scan, and the event
loop (every face's keys, Cancel, signals) must not wait for it. Every scan is linear in
the text and reads at most FOCUS_SCAN_CHARS of each message.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from loom._timeouts import within
from loom.core.messages import AssistantMessage, Message, UserMessage
from loom.session.runtime.context import RepoMapHook

if TYPE_CHECKING:
    from loom.repointel.settings import RepoSettings

log = logging.getLogger(__name__)

PATH_KEYS = ("path", "file_path", "file", "paths")
RECENT_MESSAGES = 30
_IDENTIFIER = re.compile(
    r"\b(?:[A-Za-z_][A-Za-z0-9]*_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b"
)
_ATTACHED = re.compile(r"\n\n<(?:file|directory) path=")
# A file name is a run of path characters ending in a short extension. One pass finds the
# runs; the extension is looked for inside each run (a single regex for both,
# `[\w./-]+\.[A-Za-z0-9]{1,6}\b`, backtracks over every start of a long run with no dot:
# quadratic, 95 s on a 100 KB hex dump).
_PATH_RUN = re.compile(r"[\w./-]+")
_FILE_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,6}(?!\w)")
MAX_PATH_CHARS = 512  # a longer run is a token or a dump, not a file to focus on
FOCUS_SCAN_CHARS = 16_384  # of each message: mentions are in what a person types, not in a paste


def focus_of(conversation: Sequence[Message]) -> tuple[list[str], list[str]]:
    """(files, mentions) the recent conversation is about, most recent first: `files` were
    used by tool calls; `mentions` are the identifiers and file names the user wrote. A
    file the user names is a mention only, so the map ranks it up instead of dropping it
    as already seen."""
    files: list[str] = []
    mentioned_files: list[str] = []
    identifiers: list[str] = []
    for message in reversed(conversation[-RECENT_MESSAGES:]):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                for key in PATH_KEYS:
                    value = call.arguments_json.get(key)
                    values = value if isinstance(value, list) else [value]
                    files += [v for v in values if isinstance(v, str) and v]
        elif isinstance(message, UserMessage):
            typed = message.content
            attached = getattr(message, "mentions", None)  # @path attachments
            if isinstance(attached, list):
                mentioned_files += [m for m in attached if isinstance(m, str)]
                typed = _ATTACHED.split(typed, 1)[0]  # the attached text would be noise
            typed = typed[:FOCUS_SCAN_CHARS]
            mentioned_files += [_clean_path(p) for p in file_names_in(typed)]
            identifiers += _IDENTIFIER.findall(typed)
    mentioned = _unique(mentioned_files)[:20]
    tool_files = [f for f in _unique(_clean_path(f) for f in files) if f not in mentioned]
    return tool_files[:20], mentioned + _unique(identifiers)[:30]


def file_names_in(text: str) -> list[str]:
    """The file-like names in `text` (`src/calc.py`, `@./a.b.json`), in order; linear."""
    names = []
    for run in _PATH_RUN.finditer(text):
        token = run.group()
        if len(token) > MAX_PATH_CHARS:
            continue
        end = 0
        for suffix in _FILE_SUFFIX.finditer(token, 1):  # the last extension ends the name
            end = suffix.end()
        if end:
            names.append(token[:end])
    return names


async def fetch_repo_map(
    hook: RepoMapHook | None,
    budget: int,
    conversation: Sequence[Message],
    timeout: float,
) -> str:
    if hook is None or budget <= 0:
        return ""
    recent = list(conversation[-RECENT_MESSAGES:])  # the loop may append while we read

    def focused_map() -> str:
        files, identifiers = focus_of(recent)
        return hook(budget, files, identifiers)

    try:
        text = await within(asyncio.to_thread(focused_map), timeout)
    except TimeoutError:
        log.warning("the repo map took longer than %.1f s; this call goes without it", timeout)
        return ""
    except Exception as exc:  # a broken map must never stop the turn
        log.warning("the repo map failed (%s); this call goes without it", exc)
        return ""
    return text if isinstance(text, str) else ""


def repointel_hook(project_root: Path, settings: RepoSettings | None = None) -> RepoMapHook:
    """The ranked repo map (`loom.repointel.repo_map_for`) with the [repo] settings."""

    def hook(budget: int, files: list[str], identifiers: list[str]) -> str:
        from loom.repointel import repo_map_for

        return repo_map_for(project_root, files, identifiers, budget, settings)

    return hook


def _clean_path(text: str) -> str:
    """`@./src/calc.py` -> `src/calc.py`."""
    text = text.lstrip("@")
    while text.startswith("./"):
        text = text[2:]
    return text


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
