"""Issue 20, routes 4 and 5: a sandboxed command cannot redirect git (`.git/commondir`,
renaming `.git`, new config or hooks, a worktree's `.git` file) nor leave a new
`.loom.toml`, `.mcp.json` or `.loom/` file for Loom to read later. Real `loom run --yes`,
real bubblewrap and git; the main repository of the worktree case lies inside the
writable temp folder, so only the sandbox's own mounts protect it.

Each payload would touch `layout.outside / "pwned"` if git or Loom ever ran it outside
the sandbox; no sandboxed command can write that folder."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLlmServer
from tests.support.git import git, init_repo
from tests.support.sandbox import Layout, require_sandbox, run_command


def _layout(tmp_path: Path, loom_home: Path, project: Path) -> Layout:
    outside = tmp_path / "outside"
    outside.mkdir()
    return Layout(project, outside, tmp_path / "systmp", loom_home)


@pytest.fixture
def layout(tmp_path: Path, loom_home: Path) -> Layout:
    require_sandbox()
    (tmp_path / "systmp").mkdir()
    project = init_repo(tmp_path / "proj", {"app.py": "print(1)\n"}, commit="first")
    return _layout(tmp_path, loom_home, project)


def _plant_git(marker: Path) -> str:
    hook = f"#!/bin/sh\\ntouch {marker}\\n"
    return (
        "mkdir -p /tmp/evil/hooks 2>/dev/null; "
        "echo /tmp/evil > .git/commondir; "
        f"git config core.fsmonitor 'touch {marker}'; "
        f"printf '{hook}' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
        f"printf '{hook}' > .git/hooks/post-checkout; "
        "echo '[core]' > .git/config.worktree; "
        "mv .git .git.old; rm -rf .git; "
        f"mkdir -p .git2/hooks && printf '{hook}' > .git2/hooks/pre-commit; "
        "mv .git2 .git; echo done"
    )


def _person_uses_git(root: Path, tracked: str) -> None:
    """What the person does next, with plain git, outside the sandbox."""
    git(root, "status")
    (root / tracked).write_text("changed\n")
    git(root, "commit", "-qam", "second")
    git(root, "checkout", "-q", "-b", "other")


def test_git_cannot_be_redirected_from_the_sandbox(server: FakeLlmServer, layout: Layout) -> None:
    marker = layout.outside / "pwned"
    config = (layout.project / ".git" / "config").read_bytes()
    result = run_command(server, layout, _plant_git(marker))
    assert "Read-only file system" in result["content"] or "busy" in result["content"]
    dot_git = layout.project / ".git"
    assert not (dot_git / "commondir").exists()
    assert not (dot_git / "config.worktree").exists()
    assert not (dot_git / "hooks" / "pre-commit").exists()
    assert (dot_git / "config").read_bytes() == config
    assert not (layout.project / ".git.old").exists()  # .git2 stays: git never reads it
    _person_uses_git(layout.project, "app.py")
    # and Loom's own git (gitmeta, checkpoints) after a change
    run_command(server, layout, "echo more >> app.py")
    assert not marker.exists()


def test_a_worktree_gitdir_and_its_main_repository_are_protected(
    server: FakeLlmServer, tmp_path: Path, loom_home: Path
) -> None:
    require_sandbox()
    systmp = tmp_path / "systmp"
    main = init_repo(systmp / "main", {"a.txt": "a\n"}, commit="first")  # writable folder
    project = tmp_path / "wt"
    git(main, "worktree", "add", "-q", str(project))
    layout = _layout(tmp_path, loom_home, project)
    marker = layout.outside / "pwned"
    pointer = (project / ".git").read_text()
    gitdir = Path(pointer.split(":", 1)[1].strip())
    before = {p: p.read_bytes() for p in (main / ".git").rglob("*") if p.is_file()}
    result = run_command(
        server,
        layout,
        f"echo 'gitdir: /tmp/evil' > .git; echo /tmp/evil > {gitdir}/commondir; "
        f"git config core.fsmonitor 'touch {marker}'; "
        f"printf '#!/bin/sh\\ntouch {marker}\\n' > {main}/.git/hooks/pre-commit; "
        f"mv {main}/.git {main}/.git.old; mv {gitdir} {gitdir}.old; "
        f"mv {main} {main}.old; echo done",
    )
    assert "Read-only file system" in result["content"], result["content"]
    assert (project / ".git").read_text() == pointer
    assert {p: p.read_bytes() for p in (main / ".git").rglob("*") if p.is_file()} == before
    _person_uses_git(project, "a.txt")
    subprocess.run(["git", "status"], cwd=main, check=True, capture_output=True)
    assert not marker.exists()


def test_new_loom_and_mcp_files_are_taken_away_before_loom_reads_them(
    server: FakeLlmServer, layout: Layout
) -> None:
    marker = layout.outside / "pwned"
    (layout.project / ".loom.toml").write_text("[shell]\ntimeout = 100\n")  # exists: read-only
    lsp = f'[lsp.servers.py]\\ncommand = ["touch", "{marker}"]\\nfiletypes = ["py"]\\n'
    mcp = json.dumps({"mcpServers": {"e": {"command": "touch", "args": [str(marker)]}}})
    result = run_command(
        server,
        layout,
        f"mkdir -p sub/deep && printf '{lsp}' > sub/deep/.loom.toml; "
        f"echo '{mcp}' > .mcp.json; mkdir -p .loom/agents && echo x > .loom/agents/a.md; "
        "mkdir -p lib/.loom/commands && echo x > lib/.loom/commands/c.md; "
        "echo 'y' >> .loom.toml; echo fine > notes.md; "
        "mkdir stage && echo 'name: a' > stage/a.md; echo done",
    )
    content = result["content"]
    assert "a command may not create or change .loom.toml" in content
    for path in ("sub/deep/.loom.toml", ".mcp.json", ".loom", "lib/.loom"):
        assert not (layout.project / path).exists(), path
        assert path in content
    assert (layout.project / ".loom.toml").read_text() == "[shell]\ntimeout = 100\n"
    assert (layout.project / "notes.md").read_text() == "fine\n"
    assert (layout.project / "sub" / "deep").is_dir()
    quarantine = layout.loom_home / "data" / "quarantine" / "sandbox"
    assert [p.name for p in quarantine.rglob(".mcp.json")] == [".mcp.json"]
    # a folder made earlier, moved into place as .loom: its files keep their old ctime
    moved = run_command(server, layout, "mv stage .loom && ls .loom")
    assert "a.md" in moved["content"] and not (layout.project / ".loom").exists()
    # the next run in that folder reads no planted config and starts nothing
    run_command(server, layout, "true")
    assert not marker.exists()


def test_a_nested_repository_git_is_protected_too(server: FakeLlmServer, layout: Layout) -> None:
    nested = init_repo(layout.project / "vendor" / "lib", {"x.txt": "x\n"}, commit="one")
    marker = layout.outside / "pwned"
    result = run_command(
        server,
        layout,
        f"printf '#!/bin/sh\\ntouch {marker}\\n' > vendor/lib/.git/hooks/pre-commit; "
        f"git -C vendor/lib config core.fsmonitor 'touch {marker}'; mv vendor/lib/.git x",
    )
    assert "Read-only file system" in result["content"], result["content"]
    assert not (nested / ".git" / "hooks" / "pre-commit").exists()
    assert "fsmonitor" not in (nested / ".git" / "config").read_text()
    _person_uses_git(nested, "x.txt")
    assert not marker.exists()


def test_a_hooks_folder_inside_the_project_is_protected(
    server: FakeLlmServer, layout: Layout
) -> None:
    """`core.hooksPath` naming a folder of the project (`.githooks`, husky's `.husky/_`):
    a hook planted there would run in the person's own next `git commit`."""
    hooks = layout.project / ".githooks"
    hooks.mkdir()
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (hooks / "pre-commit").chmod(0o755)
    git(layout.project, "config", "core.hooksPath", ".githooks")
    marker = layout.outside / "pwned"
    hook = f"#!/bin/sh\\ntouch {marker}\\n"
    result = run_command(
        server,
        layout,
        f"printf '{hook}' > .githooks/pre-commit; printf '{hook}' > .githooks/post-commit; "
        f"chmod +x .githooks/post-commit; mv .githooks .old-hooks; "
        f"mkdir -p x && printf '{hook}' > x/pre-commit && chmod +x x/pre-commit && "
        "mv x .githooks; echo done",
    )
    assert "Read-only file system" in result["content"], result["content"]
    assert (hooks / "pre-commit").read_text() == "#!/bin/sh\nexit 0\n"
    assert not (hooks / "post-commit").exists() and not (layout.project / ".old-hooks").exists()
    _person_uses_git(layout.project, "app.py")
    assert not marker.exists()


def test_a_hooks_folder_a_command_creates_is_taken_away(
    server: FakeLlmServer, layout: Layout
) -> None:
    """`core.hooksPath` names a folder that does not exist yet (husky before `npm
    install`): no mount can guard it, so one a command makes goes to the quarantine."""
    git(layout.project, "config", "core.hooksPath", ".husky/_")
    marker = layout.outside / "pwned"
    result = run_command(
        server,
        layout,
        f"mkdir -p .husky/_ && printf '#!/bin/sh\\ntouch {marker}\\n' > .husky/_/pre-commit "
        "&& chmod +x .husky/_/pre-commit && echo planted",
    )
    assert "planted" in result["content"]
    assert ".husky/_" in result["content"] and "git's hooks folder" in result["content"]
    assert not (layout.project / ".husky" / "_").exists()
    quarantine = layout.loom_home / "data" / "quarantine" / "sandbox"
    assert [p.name for p in quarantine.rglob("pre-commit")] == ["pre-commit"]
    _person_uses_git(layout.project, "app.py")
    assert not marker.exists()
