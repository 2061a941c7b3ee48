"""Reading agent and skill files: a project's through the confined read of project text
files (loom.project_files: a symlink leading outside the project is refused, never
followed), the person's own (`$XDG_CONFIG_HOME/loom/...`) as they are."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from loom import _beneath
from loom.delegation.frontmatter import MAX_FILE_BYTES
from loom.project_files import OutsideProject, read_project_text


class NotReadable(OSError):
    """Outside the project, not a regular file, or unreadable: the message says which."""


@dataclass(frozen=True)
class Place:
    """A folder agents or skills are read from."""

    root: Path  # the project root (confined reads) or the person's config folder
    folder: str  # relative to `root`
    source: str  # "project" | "user"
    label: str  # how a person knows it: ".loom/agents", "~/.config/loom/skills"

    @property
    def confined(self) -> bool:
        return self.source == "project"

    def entries(self) -> list[str]:
        """Names in the folder, sorted; [] when it is missing (or leads outside)."""
        if self.confined:
            real = _beneath.resolve_beneath(str(self.root), self.folder)
            if real is None:
                return []
            path = self.root / real
        else:
            path = self.root / self.folder
        try:
            return sorted(os.listdir(path))
        except OSError:
            return []

    def read(self, rel: str) -> str:
        """The text of `folder/rel` (at most MAX_FILE_BYTES); FileNotFoundError when
        there is no such file, NotReadable for any other reason it is not read."""
        shown = f"{self.label}/{rel}"
        if self.confined:  # the project's: read as the file tools read, confined
            try:
                text = read_project_text(self.root, f"{self.folder}/{rel}",
                                         max_bytes=MAX_FILE_BYTES)  # fmt: skip
            except OutsideProject as exc:
                raise NotReadable(str(exc).replace(str(self.root) + os.sep, "")) from None
            except OSError as exc:
                raise NotReadable(f"{shown}: {exc.strerror or exc}") from None
            if text is None:
                raise FileNotFoundError(f"{shown}: no such file")
            return text
        try:
            fd = os.open(self.root / self.folder / rel, os.O_RDONLY | os.O_NONBLOCK)
        except (FileNotFoundError, NotADirectoryError):
            raise FileNotFoundError(f"{shown}: no such file") from None
        except OSError as exc:
            raise NotReadable(f"{shown}: {exc.strerror or exc}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise NotReadable(f"{shown} is not a regular file; not read")
            data = os.read(fd, MAX_FILE_BYTES)
        finally:
            os.close(fd)
        return data.decode("utf-8", errors="replace")

    def leads_outside(self, rel: str) -> bool:
        """A project entry that is (or sits behind) a symlink leading outside it."""
        rel = f"{self.folder}/{rel}"
        return self.confined and _beneath.resolve_beneath(str(self.root), rel) is None

    def is_folder(self, rel: str) -> bool:
        if self.confined:
            real = _beneath.resolve_beneath(str(self.root), f"{self.folder}/{rel}")
            return real is not None and (self.root / real).is_dir()
        return (self.root / self.folder / rel).is_dir()

    def path(self, rel: str) -> Path:
        return self.root / self.folder / rel
