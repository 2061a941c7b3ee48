"""The sweep after a sandboxed command and the git folders the sandbox keeps read-only
(real files and a real git worktree; no sandbox needed)."""

from __future__ import annotations

import time
from pathlib import Path

from loom.sandbox.gitdirs import git_dirs
from loom.sandbox.sweep import Sweeper, started, sweep
from tests.support.git import git, init_repo


def _write(path: Path, text: str = "x\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_sweep_takes_away_only_what_changed_since_the_start(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    for old in (".loom.toml", "a/.loom.toml", ".loom/commands/c.md", "b/.mcp.json", "keep.txt"):
        _write(root / old)
    _write(root / "stage" / "s.md")
    since = started() + 60_000_000  # everything so far is older than the command
    assert sweep(root, since, tmp_path / "q") == []
    time.sleep(0.07)
    for new in ("deep/er/.loom.toml", ".git/.loom.toml", "x/.MCP.json", "other.txt"):
        _write(root / new)
    _write(root / ".loom" / "agents" / "a.md")  # a new file in an existing .loom
    (root / "lib").mkdir()
    (root / "stage").rename(root / "lib" / ".loom")  # old files, moved into place
    taken = sweep(root, since, tmp_path / "q")
    assert sorted(taken) == [".loom", "deep/er/.loom.toml", "lib/.loom", "x/.MCP.json"]
    assert (root / ".loom.toml").exists() and (root / "a" / ".loom.toml").exists()
    assert (root / "b" / ".mcp.json").exists() and (root / "other.txt").exists()
    assert (root / ".git" / ".loom.toml").exists()  # .git is not swept (and read-only)
    moved = sorted(p.relative_to(tmp_path / "q").parts[2:] for p in (tmp_path / "q").rglob("*.md"))
    assert moved == [
        (".loom", "agents", "a.md"),
        (".loom", "commands", "c.md"),
        ("lib", ".loom", "s.md"),
    ]


def test_git_dirs_of_a_subfolder_and_of_a_worktree(tmp_path: Path) -> None:
    main = init_repo(tmp_path / "main", {"a.txt": "a\n", "sub/b.txt": "b\n"}, commit="one")
    assert git_dirs(main / "sub") == [(main / ".git").resolve()]
    worktree = tmp_path / "wt"
    git(main, "worktree", "add", "-q", str(worktree))
    assert git_dirs(worktree) == [
        (worktree / ".git").resolve(),
        (main / ".git" / "worktrees" / "wt").resolve(),
        (main / ".git").resolve(),
    ]
    (tmp_path / "plain").mkdir()
    assert git_dirs(tmp_path / "plain") == []
    (tmp_path / "plain" / ".git").write_text("gitdir: ../nowhere\n")  # names nothing
    assert git_dirs(tmp_path / "plain") == [(tmp_path / "plain" / ".git").resolve()]


def test_the_sweeper_remembers_the_tree_and_still_finds_every_change(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    for old in ("a/b/c/.loom.toml", "a/b/keep.txt", "d/e/f.txt", ".loom/commands/c.md"):
        _write(root / old)
    sweeper = Sweeper(root)
    time.sleep(0.07)
    assert sweeper.sweep(started(), tmp_path / "q") == []  # the first one walks it all
    time.sleep(0.07)
    since = started()
    time.sleep(0.07)
    (root / "a" / "b" / "c" / ".loom.toml").write_text("[lsp]\n")  # in place: folder unchanged
    _write(root / "d" / "e" / "g" / "h" / ".mcp.json")  # a new folder under an old one
    _write(root / ".loom" / "commands" / "new.md")
    _write(root / "d" / "e" / "plain.txt")
    taken = sweeper.sweep(since, tmp_path / "q")
    assert sorted(taken) == [".loom", "a/b/c/.loom.toml", "d/e/g/h/.mcp.json"]
    time.sleep(0.07)
    since = started()
    time.sleep(0.07)
    (root / "d" / "e" / "g").rename(root / "d" / "moved")
    _write(root / "d" / "moved" / "h" / ".loom.toml")  # in a folder moved since last time
    assert sweeper.sweep(since, tmp_path / "q") == ["d/moved/h/.loom.toml"]
    assert sweeper.sweep(started(), tmp_path / "q") == []
