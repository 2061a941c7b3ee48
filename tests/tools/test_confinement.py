"""Every file tool stays inside the project root: absolute paths, `..`, symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from loom.tools.base import ToolError
from tests.support.tools import Runner

CALLS = [
    ("file_read", {}),
    ("file_write", {"content": "x"}),
    ("file_edit", {"old_string": "secret", "new_string": "x"}),
    ("file_search", {"pattern": "*"}),
    ("content_search", {"pattern": "secret"}),
    ("directory_list", {}),
]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("secret\n")
    return folder


def _escapes(root: Path, outside: Path) -> dict[str, str]:
    (root / "sub").mkdir()
    os.symlink(outside / "secret.txt", root / "link.txt")  # file symlink
    os.symlink(outside, root / "sub" / "door")  # intermediate folder symlink
    os.symlink(outside / "missing.txt", root / "dangling.txt")  # dangling, points outside
    return {
        "absolute": str(outside / "secret.txt"),
        "dotdot": "../outside/secret.txt",
        "dotdot_inner": "sub/../../outside/secret.txt",
        "home": "~/secret.txt",
        "file_symlink": "link.txt",
        "folder_symlink": "sub/door/secret.txt",
        "folder_symlink_itself": "sub/door",
        "dangling_symlink": "dangling.txt",
    }


@pytest.mark.parametrize(("tool", "extra"), CALLS)
async def test_paths_cannot_escape_the_root(
    run: Runner, root: Path, outside: Path, tool: str, extra: dict[str, str]
) -> None:
    for case, path in _escapes(root, outside).items():
        if tool in ("file_search", "content_search", "directory_list") and case in (
            "file_symlink",
            "dangling_symlink",
        ):
            continue  # those tools take folders; the folder cases cover them
        with pytest.raises(ToolError, match="outside the project"):
            await run(tool, path=path, **extra)
    assert (outside / "secret.txt").read_text() == "secret\n"
    assert not (outside / "missing.txt").exists()


async def test_symlinks_inside_the_root_work(run: Runner, root: Path) -> None:
    (root / "real").mkdir()
    (root / "real" / "a.txt").write_text("hello\n")
    os.symlink(root / "real", root / "alias")
    result = await run("file_read", path="alias/a.txt")
    assert "hello" in result.content
    assert result.metadata["path"] == "real/a.txt"  # grants see the real file


async def test_absolute_path_inside_root_is_fine(run: Runner, root: Path) -> None:
    await run("file_write", path=str(root / "x" / "y.txt"), content="ok\n")
    assert (root / "x" / "y.txt").read_text() == "ok\n"


async def test_search_does_not_follow_symlinked_folders_out(
    run: Runner, root: Path, outside: Path
) -> None:
    os.symlink(outside, root / "door")
    (root / "mine.txt").write_text("secret here too\n")
    result = await run("content_search", pattern="secret")
    assert "mine.txt" in result.content
    assert "door/secret.txt" not in result.content
    listed = await run("file_search", pattern="**/secret.txt")
    assert "door" not in listed.content


async def test_file_tools_refuse_the_root_itself(run: Runner) -> None:
    with pytest.raises(ToolError, match="directory"):
        await run("file_write", path=".", content="x")
