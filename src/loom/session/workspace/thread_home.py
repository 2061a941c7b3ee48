"""A thread is governed by its own project (issue 34).

A thread keeps the project root it was made in (`workspace_root`), and a resumed
thread works there. So the settings that govern it (config layers, trust, hooks,
permissions, MCP servers, the sandbox's roots) are that project's, never those of the
folder it was resumed from: a Workspace runs only its own project's threads
(`check_home`), and a face that is not bound to one folder (the terminal, an editor's
ACP session) opens the Workspace of the thread's project (`thread_project`). A face
bound to one project's page (`loom web`) keeps to that project's threads.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from loom.config_keys import visible
from loom.core.errors import LoomError, SetupError

if TYPE_CHECKING:
    from loom.core.thread import Thread
    from loom.paths import LoomPaths


def recorded_root(thread: Thread) -> Path | None:
    """The project root the thread was made in (None for a thread that records none)."""
    return Path(thread.workspace_root) if thread.workspace_root else None


def belongs_to(root: Path | None, project_root: Path) -> bool:
    """Is `project_root` the project of a thread recorded with `root`? Its recorded
    root, or (a thread from before roots were recorded, made in a subfolder) the
    project around it; a thread that records none works wherever it is resumed."""
    if root is None:
        return True
    here = project_root.resolve()
    if root.resolve() == here:
        return True
    from loom.config import find_project

    return root.is_dir() and find_project(root.resolve())[0] == here


def check_home(thread: Thread, project_root: Path) -> None:
    """SetupError, one line saying where to run it, unless the thread is this project's."""
    root = recorded_root(thread)
    if root is None:
        return
    if not root.is_dir():
        raise gone(thread.id, root)
    if not belongs_to(root, project_root):
        shown = visible(str(root))  # a synced thread's file is someone else's text
        raise SetupError(
            f"thread {thread.id} belongs to the project {shown}, not this one "
            f"({project_root}); continue it there: cd {shown} && loom resume {thread.id}"
        )


def gone(thread_id: str, root: Path) -> SetupError:
    return SetupError(
        f"thread {thread_id} works in {visible(str(root))}, which no longer exists; put that "
        f"folder back to continue it there (`loom show {thread_id}` reads it anywhere)"
    )


def thread_project(ref: str, paths: LoomPaths | None = None) -> Path | None:
    """The folder of the project thread `ref` (id or unique prefix) works in, for a face
    to open its Workspace there. None when `ref` names no thread or the thread records
    no root (starting the session then says why). SetupError when that folder is gone."""
    from loom.paths import LoomPaths
    from loom.store.local import LocalThreadStore

    store = LocalThreadStore(paths or LoomPaths.from_env())
    try:
        thread = store.load(store.resolve(ref))
    except (LoomError, OSError, ValueError):  # not found, ambiguous, unreadable: said later
        return None
    root = recorded_root(thread) if thread is not None else None
    if thread is None or root is None:
        return None
    if not root.is_dir():
        raise gone(thread.id, root)
    return root.resolve()
