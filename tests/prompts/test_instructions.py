"""AGENTS.md, CLAUDE.md, LOOM.md and the person's own file: which are read, in what order,
confined to the project, and nested folders' files handed over once."""

from __future__ import annotations

import os
from pathlib import Path

from loom.prompts import NestedInstructions, load_instructions
from loom.prompts.instructions import MAX_FILE_BYTES


def test_root_agents_md_then_loom_md(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Run `make test`.\n")
    (tmp_path / "CLAUDE.md").write_text("ignored: AGENTS.md is there\n")
    (tmp_path / "LOOM.md").write_text("Use tabs.\n")
    found = load_instructions(tmp_path)
    assert found.labels == ["AGENTS.md", "LOOM.md"]
    text = found.render()
    assert text.index("Run `make test`.") < text.index("Use tabs.")
    assert "ignored" not in text
    assert found.header() == "instructions: AGENTS.md, LOOM.md"


def test_claude_md_where_a_folder_has_no_agents_md(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("Claude's notes\n")
    assert load_instructions(tmp_path).labels == ["CLAUDE.md"]


def test_user_file_first_and_cwd_folders_down(tmp_path: Path) -> None:
    user = tmp_path / "config"
    user.mkdir()
    (user / "AGENTS.md").write_text("Answer in English.\n")
    root = tmp_path / "proj"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root\n")
    (root / "pkg" / "AGENTS.md").write_text("pkg rules\n")
    (root / "pkg" / "sub" / "LOOM.md").write_text("sub rules\n")
    found = load_instructions(root, root / "pkg" / "sub", user_dir=user)
    labels = found.labels
    assert labels[0].startswith(str(user / "AGENTS.md")) and "yours" in labels[0]
    assert labels[1:] == ["AGENTS.md", "pkg/AGENTS.md", "pkg/sub/LOOM.md"]


def test_symlink_leading_outside_is_refused_and_reported(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=abc\n")
    root = tmp_path / "proj"
    root.mkdir()
    os.symlink(secret, root / "AGENTS.md")
    (root / "LOOM.md").write_text("fine\n")
    found = load_instructions(root)
    assert "TOKEN" not in found.render()
    assert found.labels == ["LOOM.md"]
    (refused,) = found.refused
    assert refused.startswith("AGENTS.md leads outside the project (a symlink); not read")
    assert "not read: AGENTS.md leads outside the project" in (found.header() or "")


def test_symlink_inside_the_project_is_followed(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "agents.md").write_text("shared rules\n")
    os.symlink("docs/agents.md", tmp_path / "AGENTS.md")
    assert "shared rules" in load_instructions(tmp_path).render()


def test_a_huge_file_is_cut_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("x" * (MAX_FILE_BYTES + 10))
    text = load_instructions(tmp_path).render()
    assert f"cut at {MAX_FILE_BYTES:,} bytes" in text
    assert len(load_instructions(tmp_path).render(max_tokens=100)) < 1000


def test_nested_files_once_per_folder_inside_the_budget(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "deep").mkdir(parents=True)
    (tmp_path / "pkg" / "AGENTS.md").write_text("pkg: run tox\n")
    (tmp_path / "pkg" / "deep" / "CLAUDE.md").write_text("deep: " + "word " * 400)
    nested = NestedInstructions(tmp_path, None, budget_tokens=150)
    first = nested.for_path("pkg/deep/mod.py")
    assert "[Loom: instructions from pkg/AGENTS.md, for files under pkg/]" in first
    assert "pkg: run tox" in first
    assert "from pkg/deep/CLAUDE.md" in first and "cut to fit" in first
    assert nested.for_path("pkg/other.py") == ""  # once per session
    again = NestedInstructions(tmp_path, None, budget_tokens=150)
    again.remember([first])  # a resumed thread already carried them
    assert again.for_path("pkg/deep/x.py") == ""


def test_nested_budget_used_up(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "AGENTS.md").write_text("rules for a\n")
    nested = NestedInstructions(tmp_path, None, budget_tokens=100, used_tokens=100)
    assert "not shown: the instructions budget is used up" in nested.for_path("a/f.py")
