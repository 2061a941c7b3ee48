"""Files through the editor (ACP `fs/read_text_file`, `fs/write_text_file`) when the
client offers them: the agent reads unsaved buffers and its edits land in them. The file
tools confine every path to the project before asking; anything the editor cannot do
falls back to the disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class EditorFiles:
    def __init__(self, client: Any, session_id: str, *, read: bool, write: bool) -> None:
        self.client = client
        self.session_id = session_id
        self.can_read = read
        self.can_write = write

    async def read_text(self, path: Path) -> str | None:
        if not self.can_read:
            return None
        response = await self.client.read_text_file(session_id=self.session_id, path=str(path))
        return response.content

    async def write_text(self, path: Path, text: str) -> bool:
        if not self.can_write:
            return False
        await self.client.write_text_file(session_id=self.session_id, path=str(path), content=text)
        return True


def editor_files_for(client: Any, session_id: str, capabilities: Any) -> EditorFiles | None:
    fs = getattr(capabilities, "fs", None)
    read = bool(getattr(fs, "read_text_file", False))
    write = bool(getattr(fs, "write_text_file", False))
    if not (read or write):
        return None
    return EditorFiles(client, session_id, read=read, write=write)
