"""repo_map / symbol_search through the default tool registry; `loom map` and `loom index`
as a person runs them."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.repointel.service import RepoIntel
from loom.session.assembly.toolset import default_registry
from loom.tools.base import ToolContext, ToolError
from tests.support.files import write
from tests.support.loom_cli import Done, loom_in_process
from tests.support.tools import tool_named


def loom(*args: str, cwd: Path) -> Done:
    return loom_in_process(list(args), cwd, None)


async def test_tools_are_in_the_default_registry_and_answer(shop: Path) -> None:
    registry = default_registry(shop)
    for name in (
        "repo_map",
        "symbol_search",
        "lsp_diagnostics",
        "lsp_definition",
        "lsp_references",
        "lsp_hover",
    ):
        assert name in registry
    ctx = ToolContext(project_root=shop)
    try:
        result = await tool_named(registry, "repo_map").run(
            {"tokens": 200, "mentioned_identifiers": ["renderCart"]}, ctx
        )
        assert result.content.startswith("web/render.js:") and not result.is_error
        hits = await tool_named(registry, "symbol_search").run({"query": "find_prod"}, ctx)
        assert hits.content.startswith("shop/catalog.py:10  function  find_product")
        with pytest.raises(ToolError, match="no definition named"):
            await tool_named(registry, "symbol_search").run({"query": "zzz_nothing"}, ctx)
        with pytest.raises(ToolError):
            await tool_named(registry, "repo_map").run({"tokens": "lots"}, ctx)
    finally:
        RepoIntel.forget(shop)


def test_loom_map_prints_the_map_with_budget_focus_and_mentions(shop: Path) -> None:
    done = loom(
        "map", "--tokens", "120", "--mention", "renderCart", "--focus", "shop/api.py", cwd=shop
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "web/render.js:"
    assert "shop/api.py:" not in done.stdout
    default = loom("map", cwd=shop / "shop")  # from a subfolder: the project is found
    assert default.returncode == 0 and "shop/models.py:" in default.stdout


def test_loom_map_reads_the_budget_from_project_config(shop: Path) -> None:
    write(shop, ".loom.toml", '[repo]\nmap_tokens = 40\nignore = ["cmd/"]\n')
    done = loom("map", cwd=shop)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) < 400 and "cmd/report.go" not in done.stdout


def test_loom_map_on_an_empty_folder_says_so(tmp_path: Path) -> None:
    done = loom("map", "--root", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0 and "no source files" in done.stderr


def test_loom_index_prints_a_summary(shop: Path) -> None:
    write(shop, "blob.py", b"\x00\x01" * 10)
    done = loom("index", cwd=shop)
    assert done.returncode == 0, done.stderr
    assert "files:" in done.stdout and "11 new" in done.stdout
    assert "python 6" in done.stdout and "go 1" in done.stdout  # the binary blob.py is not
    assert "symbols:" in done.stdout and "time:" in done.stdout
    again = loom("index", cwd=shop)
    assert "0 new, 0 changed, 0 removed" in again.stdout
