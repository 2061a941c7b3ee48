from __future__ import annotations

import os
from pathlib import Path

import pytest

from loom.tools.base import ToolContext, ToolError
from loom.tools.content_search import ContentSearch, find_rg
from tests.support.tools import Runner


@pytest.fixture
def tree(root: Path) -> Path:
    files = {
        "src/app.py": "import os\n\ndef main():\n    print('Hello')\n",
        "src/util/helpers.py": "def helper():\n    return 'hello world'\n",
        "src/util/data.json": '{"hello": 1}\n',
        "tests/test_app.py": "from src.app import main\n\ndef test_main():\n    main()\n",
        "build/out.py": "hello = 'generated'\n",
        "logs/keep.log": "hello log\n",
        "logs/drop.log": "hello log\n",
        "node_modules/pkg/index.js": "hello\n",
        ".hidden/conf.py": "hello = 1\n",
        "README.md": "# Hello\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "logs" / ".gitignore").write_text("!keep.log\n")
    (root / "image.bin").write_bytes(b"hello\x00\x01\x02")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("hello\n")
    for age, rel in enumerate(["README.md", "src/app.py", "tests/test_app.py"]):
        os.utime(root / rel, (1_000_000 + age, 1_000_000 + age))
    return root


async def test_file_search_glob_gitignore_and_sort(run: Runner, tree: Path) -> None:
    result = await run("file_search", pattern="**/*.py", sort="path")
    assert result.content.splitlines() == [
        ".hidden/conf.py",
        "src/app.py",
        "src/util/helpers.py",
        "tests/test_app.py",
    ]
    newest = await run("file_search", pattern="*.py")
    names = newest.content.splitlines()
    assert names.index("tests/test_app.py") < names.index("src/app.py")
    logs = await run("file_search", pattern="*.log")
    assert logs.content.splitlines() == ["logs/keep.log"]  # nested negation re-includes it
    scoped = await run("file_search", pattern="*.py", path="src/util")
    assert scoped.content.splitlines() == ["src/util/helpers.py"]


async def test_file_search_caps_and_reports_none(run: Runner, root: Path) -> None:
    for i in range(30):
        (root / f"f{i:02}.txt").write_text("x")
    capped = await run("file_search", pattern="*.txt", limit=5, sort="path")
    assert capped.content.splitlines()[:5] == [f"f{i:02}.txt" for i in range(5)]
    assert "30 files match; showing 5" in capped.content
    none = await run("file_search", pattern="*.rs")
    assert none.content == "No files in the project match '*.rs'."
    with pytest.raises(ToolError, match="does not exist"):
        await run("file_search", pattern="*", path="missing")


async def test_directory_list_tree(run: Runner, tree: Path) -> None:
    result = await run("directory_list", depth=2)
    lines = result.content.splitlines()
    assert lines[0] == "./"
    assert "  src/" in lines and "    app.py" in lines and "    util/" in lines
    assert "      helpers.py" not in lines  # depth 2 stops there
    assert not any("build" in line or "node_modules" in line or ".git/" in line for line in lines)
    deep = await run("directory_list", path="src", depth=5)
    assert deep.content.splitlines()[0] == "src/"
    assert deep.content.splitlines()[1:] == [
        "  app.py",
        "  util/",
        "    data.json",
        "    helpers.py",
    ]
    with pytest.raises(ToolError, match="is a file"):
        await run("directory_list", path="README.md")


@pytest.fixture(params=["ripgrep", "python"])
def search(request: pytest.FixtureRequest, root: Path) -> ContentSearch:
    if request.param == "ripgrep" and find_rg() is None:
        pytest.skip("no rg binary")
    return ContentSearch(root, use_ripgrep=request.param == "ripgrep")


async def test_content_search_engines_agree(search: ContentSearch, tree: Path) -> None:
    ctx = ToolContext(tree)
    result = await search.run({"pattern": "hello"}, ctx)
    files = [line for line in result.content.splitlines() if not line.startswith(" ")]
    assert files == [
        ".hidden/conf.py",
        "logs/keep.log",
        "src/util/data.json",
        "src/util/helpers.py",
    ]
    assert "  2: return 'hello world'" in result.content.replace("    ", "")
    insensitive = await search.run(
        {"pattern": "hello", "case_insensitive": True, "include": "*.py"}, ctx
    )
    files = [line for line in insensitive.content.splitlines() if not line.startswith(" ")]
    assert files == [".hidden/conf.py", "src/app.py", "src/util/helpers.py"]
    context = await search.run({"pattern": "def main", "context": 1, "path": "src"}, ctx)
    assert context.content.splitlines() == [
        "src/app.py",
        "  2- ",
        "  3: def main():",
        "  4-     print('Hello')",
    ]
    single = await search.run({"pattern": "Hello", "path": "README.md"}, ctx)
    assert single.content.splitlines() == ["README.md", "  1: # Hello"]
    none = await search.run({"pattern": "zebra"}, ctx)
    assert none.content == "No matches for 'zebra'." and none.metadata["matches"] == 0


async def test_content_search_caps_output(search: ContentSearch, root: Path) -> None:
    (root / "many.txt").write_text("match\n" * 500)
    result = await search.run({"pattern": "match", "limit": 10}, ToolContext(root))
    assert result.metadata["matches"] == 10
    assert "stopped after 10 matching lines" in result.content


async def test_python_search_reports_progress(root: Path) -> None:
    for i in range(1200):
        (root / f"f{i}.txt").write_text("needle\n" if i == 700 else "hay\n")
    seen: list[str] = []
    ctx = ToolContext(root, progress=lambda fraction, message: seen.append(message))
    result = await ContentSearch(root, use_ripgrep=False).run({"pattern": "needle"}, ctx)
    assert result.content.splitlines()[0] == "f700.txt"
    assert "searched 1,200 of 1,200 files" in seen
