from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from loom.tools.base import ToolError
from loom.tools.file_read import DEFAULT_LIMIT, MAX_LINE_CHARS
from tests.support.tools import Runner


async def test_read_numbers_lines_and_pages(run: Runner, root: Path) -> None:
    (root / "a.py").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    whole = await run("file_read", path="a.py")
    assert whole.content.splitlines()[0] == "     1\tline 1"
    assert whole.content.splitlines()[-1] == "    10\tline 10"
    page = await run("file_read", path="a.py", offset=4, limit=2)
    assert page.content.splitlines()[:2] == ["     4\tline 4", "     5\tline 5"]
    assert "showing lines 4-5 of 10" in page.content
    assert "offset=6" in page.content
    assert page.metadata == {"path": "a.py", "lines": 10, "first": 4, "last": 5}


async def test_read_large_file_suggests_offset(run: Runner, root: Path) -> None:
    (root / "big.log").write_text("x\n" * (DEFAULT_LIMIT + 500))
    result = await run("file_read", path="big.log")
    assert f"showing lines 1-{DEFAULT_LIMIT} of {DEFAULT_LIMIT + 500}" in result.content
    assert f"offset={DEFAULT_LIMIT + 1}" in result.content


async def test_read_huge_lines_are_cut_and_output_capped(run: Runner, root: Path) -> None:
    (root / "min.js").write_text(("y" * 50_000 + "\n") * 100)
    result = await run("file_read", path="min.js")
    assert len(result.content) < 150_000
    assert "line cut" in result.content
    assert "output size limit" in result.content
    assert f"cut at {MAX_LINE_CHARS} characters" in result.content


async def test_read_offset_past_end(run: Runner, root: Path) -> None:
    (root / "a.txt").write_text("one\ntwo")
    with pytest.raises(ToolError, match="has 2 lines"):
        await run("file_read", path="a.txt", offset=5)


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"%PDF-1.7\n" + bytes(100), "PDF document"),
        (b"abc\x00def", "binary data"),
        (b"\x7fELF\x02\x01", "executable"),
    ],
)
async def test_read_binary_is_a_clear_message(
    run: Runner, root: Path, data: bytes, kind: str
) -> None:
    (root / "blob").write_bytes(data)
    with pytest.raises(ToolError, match=f"is (a |an )?{kind}.*not a text file"):
        await run("file_read", path="blob")


async def test_read_image_hands_the_bytes_to_the_session(run: Runner, root: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(100)
    (root / "shot.png").write_bytes(png)
    result = await run("file_read", path="shot.png")
    assert result.content == "shot.png is an image (image/png, 108 bytes)."
    assert result.metadata["image"] == ("shot.png", png)  # shown or refused per model


async def test_read_missing_suggests_close_names(run: Runner, root: Path) -> None:
    (root / "config.py").write_text("x")
    with pytest.raises(ToolError, match=r"Did you mean: config\.py"):
        await run("file_read", path="confg.py")
    with pytest.raises(ToolError, match="directory_list"):
        await run("file_read", path=".")


async def test_read_empty_and_invalid_utf8(run: Runner, root: Path) -> None:
    (root / "empty").write_text("")
    assert "empty" in (await run("file_read", path="empty")).content
    (root / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    assert "caf\ufffd" in (await run("file_read", path="latin1.txt")).content


async def test_write_creates_parents_and_overwrites(run: Runner, root: Path) -> None:
    created = await run("file_write", path="deep/er/new.txt", content="a\nb\n")
    assert created.content.startswith("Created deep/er/new.txt (2 lines")
    assert (root / "deep/er/new.txt").read_text() == "a\nb\n"
    again = await run("file_write", path="deep/er/new.txt", content="c")
    assert again.content.startswith("Overwrote")
    assert (root / "deep/er/new.txt").read_text() == "c"
    assert [p.name for p in (root / "deep/er").iterdir()] == ["new.txt"]  # no temp files left


async def test_write_keeps_permission_bits(run: Runner, root: Path) -> None:
    script = root / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    await run("file_write", path="run.sh", content="#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(os.stat(script).st_mode) == 0o755


async def test_edit_unique_match(run: Runner, root: Path) -> None:
    (root / "m.py").write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    result = await run("file_edit", path="m.py", old_string="return 2", new_string="return 3")
    assert (root / "m.py").read_text().endswith("return 3\n")
    assert "1 occurrence at line 5" in result.content
    assert "     5\t    return 3" in result.content


async def test_edit_ambiguous_match_lists_lines(run: Runner, root: Path) -> None:
    (root / "m.py").write_text("x = 1\ny = 2\nx = 1\n")
    with pytest.raises(ToolError, match=r"occurs 2 times in m.py \(at lines 1, 3\).*replace_all"):
        await run("file_edit", path="m.py", old_string="x = 1", new_string="x = 9")
    assert (root / "m.py").read_text() == "x = 1\ny = 2\nx = 1\n"
    result = await run(
        "file_edit", path="m.py", old_string="x = 1", new_string="x = 9", replace_all=True
    )
    assert (root / "m.py").read_text() == "x = 9\ny = 2\nx = 9\n"
    assert "2 occurrences" in result.content


async def test_edit_not_found_points_at_closest_text(run: Runner, root: Path) -> None:
    (root / "m.py").write_text("class A:\n    def run(self):\n        return 1\n")
    with pytest.raises(ToolError) as caught:
        await run(
            "file_edit",
            path="m.py",
            old_string="def run(self):\n    return 1",
            new_string="def run(self):\n    return 2",
        )
    message = str(caught.value)
    assert "not found in m.py" in message
    assert "closest text is at line 2" in message
    assert "differ only in whitespace" in message
    assert "     2\t    def run(self):" in message
    with pytest.raises(ToolError, match="Read the file with file_read"):
        await run("file_edit", path="m.py", old_string="zzz qqq", new_string="y")


async def test_edit_keeps_crlf_line_endings(run: Runner, root: Path) -> None:
    (root / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await run("file_edit", path="w.txt", old_string="one\ntwo", new_string="uno\ndos")
    assert (root / "w.txt").read_bytes() == b"uno\r\ndos\r\nthree\r\n"


async def test_edit_refusals(run: Runner, root: Path) -> None:
    with pytest.raises(ToolError, match="file_write to create"):
        await run("file_edit", path="nope.py", old_string="a", new_string="b")
    (root / "a.py").write_text("a")
    with pytest.raises(ToolError, match="the same"):
        await run("file_edit", path="a.py", old_string="a", new_string="a")
    (root / "b.bin").write_bytes(b"\x00\x01a")
    with pytest.raises(ToolError, match="not a text file"):
        await run("file_edit", path="b.bin", old_string="a", new_string="b")
    (root / "c.txt").write_bytes(b"\xff\xfe a")
    with pytest.raises(ToolError, match="not valid UTF-8"):
        await run("file_edit", path="c.txt", old_string="a", new_string="b")
    assert (root / "c.txt").read_bytes() == b"\xff\xfe a"
