"""Project instructions: the AGENTS.md / CLAUDE.md / LOOM.md files people write for agents.

Which files, in order (later ones are more specific and read last):

1. the person's own `$XDG_CONFIG_HOME/loom/AGENTS.md`, for every project;
2. each folder from the project root down to the working folder: its `AGENTS.md`, or
   `CLAUDE.md` when it has no `AGENTS.md`, then its `LOOM.md` (Loom's older name);
3. nested folders the agent reaches later: when it first reads or edits a file under
   `pkg/`, the same files of `pkg/` (and of every folder between) are handed to it with
   that tool result, once per session, inside what is left of the budget
   (`NestedInstructions`).

Project files are the repository's text: they are read as the file tools read
(`loom.project_files`), so a symlink that leads outside the project is refused and
reported, never followed. A file larger than `MAX_FILE_BYTES` is cut and says so.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from loom.project_files import OutsideProject, read_project_bytes

AGENT_FILES = ("AGENTS.md", "CLAUDE.md")  # the first one a folder has is read
LOOM_FILE = "LOOM.md"
USER_FILE = "AGENTS.md"  # in Loom's config folder
MAX_FILE_BYTES = 64_000
HEADING = (
    "# Project instructions\n\n"
    "The files below were written for agents working in this project. Follow them; when "
    "they disagree with what the person asks in this conversation, the person wins."
)
NESTED_MARK = "[Loom: instructions from {label}, for files under {folder}/]"
_NESTED_RE = re.compile(r"^\[Loom: instructions from .+?, for files under (.+)/\]$", re.MULTILINE)


@dataclass(frozen=True)
class InstructionFile:
    label: str  # how it is named to the model and the person: "pkg/AGENTS.md", "~/..."
    text: str


@dataclass
class ProjectInstructions:
    """The instruction files read at the start of a session, and the ones refused."""

    files: list[InstructionFile] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "label: why", for the header

    @property
    def labels(self) -> list[str]:
        return [f.label for f in self.files]

    def render(self, max_tokens: int | None = None) -> str:
        """The system prompt's instructions zone ("" when there are none), cut to
        `max_tokens` (the most specific files, read last, are the ones cut)."""
        if not self.files:
            return ""
        parts = [HEADING]
        parts += [f"## {f.label}\n\n{f.text}" for f in self.files]
        text = "\n\n".join(parts)
        return text if max_tokens is None else fit_tokens(text, max_tokens)

    def header(self) -> str | None:
        """One line for a face's session header: which files were loaded (and refused)."""
        if not self.files and not self.refused:
            return None
        said = "instructions: " + (", ".join(self.labels) if self.files else "none")
        if self.refused:
            said += "; not read: " + "; ".join(self.refused)
        return said


def load_instructions(
    project_root: Path, cwd: Path | None = None, *, user_dir: Path | None = None
) -> ProjectInstructions:
    """The instruction files for a session in `project_root` started in `cwd`."""
    found = ProjectInstructions()
    if user_dir is not None:
        user_file = _user_file(user_dir)
        if user_file is not None:
            found.files.append(user_file)
    for folder in _folders_down_to(project_root, cwd):
        files, refused = folder_files(project_root, folder)
        found.files += files
        found.refused += refused
    return found


def folder_files(root: Path, folder: str) -> tuple[list[InstructionFile], list[str]]:
    """The instruction files of one project folder ("" is the root): its AGENTS.md (or
    CLAUDE.md), then its LOOM.md; and those refused, as "label: why"."""
    files: list[InstructionFile] = []
    refused: list[str] = []
    for group in (AGENT_FILES, (LOOM_FILE,)):
        for name in group:
            rel = f"{folder}/{name}" if folder else name
            try:
                text = read_instruction_file(root, rel)
            except FileNotFoundError:
                continue
            except OutsideProject as exc:  # "<root>/<rel> leads outside ...; not read"
                refused.append(rel + str(exc).removeprefix(os.path.join(str(root), rel)))
                break
            except OSError as exc:
                refused.append(f"{rel}: {exc.strerror or exc}; not read")
                break
            if text.strip():
                files.append(InstructionFile(rel, text))
            break  # AGENTS.md found: its CLAUDE.md is not read
    return files, refused


def read_instruction_file(root: Path, rel: str, limit: int = MAX_FILE_BYTES) -> str:
    """A project instruction file, read as the file tools read (`loom.project_files`:
    in-project symlinks followed, one leading outside refused with OutsideProject);
    cut at `limit` bytes with a note. FileNotFoundError when there is none."""
    raw = read_project_bytes(root, rel, max_bytes=limit + 1)
    if raw is None:
        raise FileNotFoundError(rel)
    text = raw[:limit].decode("utf-8", errors="replace").strip()
    if len(raw) > limit:
        text += f"\n\n[{rel} cut at {limit:,} bytes]"
    return text


class NestedInstructions:
    """Instruction files of folders below the ones read at start, handed to the model
    with the result of the first tool call that reads or edits a file under them."""

    def __init__(
        self, root: Path, cwd: Path | None, budget_tokens: int, used_tokens: int = 0
    ) -> None:
        self.root = root
        self.budget = budget_tokens
        self.used = used_tokens
        self.seen: set[str] = set(_folders_down_to(root, cwd))
        self.asked: set[str] = set()  # paths `for_path` was called with

    def remember(self, conversation_texts: Iterable[str]) -> None:
        """A resumed thread: folders whose files an earlier tool result already carried."""
        for text in conversation_texts:
            self.seen.update(match[1] for match in _NESTED_RE.finditer(text))

    def unseen(self, rel: str) -> bool:
        """Could `for_path(rel)` reach a folder not seen yet? (Without I/O: a path never
        asked about may be a folder.)"""
        parts = PurePosixPath(rel).parts
        if any("/".join(parts[:depth]) not in self.seen for depth in range(1, len(parts))):
            return True
        return rel not in self.seen and rel not in self.asked

    def for_path(self, rel: str, is_folder: bool = False) -> str:
        """The text to add to a tool result about `rel` (a project-relative path): the
        files of every folder on its way not seen yet, or ""."""
        from loom.llm.tokens import estimate_tokens

        self.asked.add(rel)
        parts = PurePosixPath(rel).parts
        folders = parts if is_folder else parts[:-1]
        notes: list[str] = []
        for depth in range(1, len(folders) + 1):
            folder = "/".join(folders[:depth])
            if folder in self.seen or folder.startswith(".."):
                continue
            self.seen.add(folder)
            files, refused = folder_files(self.root, folder)
            notes += [f"[Loom: {why}]" for why in refused]
            for found in files:
                left = self.budget - self.used
                mark = NESTED_MARK.format(label=found.label, folder=folder)
                if left <= 0:
                    notes.append(f"{mark}\n[not shown: the instructions budget is used up]")
                    continue
                text = fit_tokens(found.text, left)
                self.used += estimate_tokens(text)
                notes.append(f"{mark}\n{text}\n[end of {found.label}]")
        return "\n\n".join(notes)


def fit_tokens(text: str, tokens: int) -> str:
    """`text`, cut (with a note) so that it is about `tokens` tokens at most."""
    from loom.llm.tokens import fit_to_tokens

    return fit_to_tokens(text, tokens, "[cut to fit the instructions budget]")


def _folders_down_to(root: Path, cwd: Path | None) -> list[str]:
    """ "" (the root), then each folder between the root and `cwd`, as relative paths."""
    folders = [""]
    if cwd is None:
        return folders
    try:
        rel = Path(os.path.realpath(cwd)).relative_to(os.path.realpath(root))
    except ValueError:
        return folders
    parts = rel.parts
    folders += ["/".join(parts[:depth]) for depth in range(1, len(parts) + 1)]
    return folders


def _user_file(user_dir: Path) -> InstructionFile | None:
    path = user_dir / USER_FILE
    try:
        raw = path.read_bytes()[: MAX_FILE_BYTES + 1]
    except OSError:
        return None
    text = raw[:MAX_FILE_BYTES].decode("utf-8", errors="replace").strip()
    if not text:
        return None
    home = str(Path.home())
    label = str(path)
    if label.startswith(home + os.sep):
        label = "~" + label[len(home) :]
    return InstructionFile(f"{label} (yours, for every project)", text)
