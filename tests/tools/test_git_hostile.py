"""The git tool against a hostile repository and hostile arguments (issue 16, items 2-3).

Class 2: every path-taking or program-running option is refused, positional paths are
confined, and no outside file's content reaches the output.
Class 3: read-only git runs with a `.git/config` that names programs everywhere git
would run one (fsmonitor, filters, diff drivers, pagers, gpg, includes), and nothing
runs. Write subcommands run with the same fixed overrides.
"""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

import pytest

from loom.tools.base import ToolError
from tests.support.git import git, make_repo
from tests.support.tools import Runner

OUTSIDE_SECRET = "outside-secret-3f9c"


@pytest.fixture
def repo(root: Path, tmp_path: Path) -> Path:
    make_repo(root)
    (tmp_path / "outside.txt").write_text(OUTSIDE_SECRET + "\n")
    (root / "link-out").symlink_to(tmp_path / "outside.txt")
    return root


# -- class 2: arguments ----------------------------------------------------------------

REFUSED_ARGS = [
    ("status", ["--pathspec-from-file=/etc/hostname"]),
    ("add", ["--pathspec-from-file", "/etc/hostname"]),
    ("add", ["--pathspec-from=/etc/hostname"]),  # git's own abbreviation of the option
    ("commit", ["--pathspec-from-file=/etc/hostname", "-m", "x"]),
    ("commit", ["-F", "OUTSIDE"]),
    ("commit", ["--file=OUTSIDE"]),
    ("commit", ["-t", "OUTSIDE", "-m", "x"]),
    ("commit", ["--template=OUTSIDE", "-m", "x"]),
    ("commit", ["-S", "-m", "x"]),
    ("commit", ["--gpg-sign", "-m", "x"]),
    ("status", ["-C", "/"]),
    ("log", ["--git-dir=/tmp"]),
    ("log", ["--work-tree=/"]),
    ("diff", ["--output=/tmp/loom-out"]),
    ("log", ["-o", "/tmp/loom-out"]),
    ("log", ["--outp=/tmp/loom-out"]),
    ("show", ["--output", "/tmp/loom-out"]),
    ("status", ["--exec-path=/tmp"]),
    ("log", ["-c", "core.pager=touch PWNED"]),
    ("status", ["--config-env=core.fsmonitor=HOME"]),
    ("log", ["--upload-pack=touch PWNED"]),
    ("diff", ["--ext-diff"]),
    ("diff", ["--textconv"]),
    ("log", ["--show-signature"]),
    ("diff", ["--no-index", "/etc/hostname", "a.txt"]),
    ("diff", ["-O/etc/hostname"]),
    ("diff", ["-OOUTSIDE"]),
    ("log", ["-L1,2:OUTSIDE"]),
    ("diff", ["OUTSIDE", "/dev/null"]),  # implicit --no-index: both paths outside
    ("diff", ["link-out", "a.txt"]),
    ("diff", ["--", "../outside.txt"]),
    ("add", ["link-out/../../outside.txt"]),
    ("add", ["~/x"]),
    ("log", ["--", "/etc"]),
    ("show", ["HEAD", "--", "OUTSIDE"]),
    ("stash", ["push", "--pathspec-from-file=OUTSIDE"]),
    ("stash", ["show", "--ext-diff"]),
    ("stash", ["list", "--output=/tmp/loom-out"]),
    ("stash", ["drop"]),
    ("branch", ["-D", "main"]),
    ("branch", ["--set-upstream-to=x"]),
    ("status", ["--untracked-files", "--column=always", "-c"]),
    ("status", ["-sbc"]),  # a cluster hiding an unknown letter
]


@pytest.mark.parametrize(("subcommand", "args"), REFUSED_ARGS)
async def test_path_taking_and_program_options_are_refused(
    run: Runner, repo: Path, tmp_path: Path, subcommand: str, args: list[str]
) -> None:
    outside = str(tmp_path / "outside.txt")
    args = [a.replace("OUTSIDE", outside) for a in args]
    with pytest.raises(ToolError) as caught:
        await run("git", subcommand=subcommand, args=args)
    assert OUTSIDE_SECRET not in str(caught.value)
    assert not Path("/tmp/loom-out").exists() and not (repo / "PWNED").exists()


ALLOWED_ARGS = [
    ("status", ["-sb"], "## main"),
    ("status", ["--porcelain=v1", "--untracked-files=all"], "link-out"),
    ("log", ["--oneline", "-5"], "first"),
    ("log", ["-n", "1", "--format=%s"], "first"),
    ("log", ["-1", "--stat", "--", "a.txt"], "a.txt"),
    ("show", ["--stat", "HEAD"], "first"),
    ("show", ["HEAD:a.txt"], "one"),
    ("diff", ["--stat", "HEAD"], ""),
    ("branch", ["-a", "-v"], "main"),
    ("branch", ["--list", "ma*"], "main"),
]


@pytest.mark.parametrize(("subcommand", "args", "expected"), ALLOWED_ARGS)
async def test_everyday_options_still_work(
    run: Runner, repo: Path, subcommand: str, args: list[str], expected: str
) -> None:
    result = await run("git", subcommand=subcommand, args=args)
    assert expected in result.content


# -- class 3: a hostile .git/config ------------------------------------------------------

HOSTILE_CONFIGS = {
    "fsmonitor": ["core.fsmonitor", "touch {mark}; false"],
    "filter": ["filter.evil.clean", "touch {mark}; cat"],
    "filter-process": ["filter.evil.process", "touch {mark}"],
    "textconv": ["diff.evil.textconv", "touch {mark}; cat"],
    "diff-command": ["diff.evil.command", "touch {mark}"],
    "external-diff": ["diff.external", "touch {mark}"],
    "pager": ["core.pager", "touch {mark}; cat"],
    "pager-per-command": ["pager.log", "touch {mark}; cat"],
    "gpg": ["gpg.program", "touch {mark}"],
    "hooks": ["core.hooksPath", "{hooks}"],
}
READ_CALLS = [
    ("status", []),
    ("status", ["--porcelain"]),
    ("diff", []),
    ("diff", ["HEAD"]),
    ("log", ["-p", "-1"]),
    ("log", ["-1", "--format=%G?"]),
    ("show", ["HEAD"]),
    ("branch", ["-v"]),
    ("stash", ["list"]),
]


def _poison(repo: Path, tmp_path: Path, key: str, value: str, via_include: bool) -> Path:
    mark = tmp_path / "PWNED"
    hooks = tmp_path / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in ("pre-commit", "post-commit", "post-index-change", "reference-transaction"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\ntouch {mark}\n")
        hook.chmod(0o755)
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    git(repo, "config", "log.showSignature", "true")
    value = value.format(mark=mark, hooks=hooks)
    if via_include:  # the key arrives through include.path, from a file outside .git
        extra = tmp_path / "extra.cfg"
        subprocess.run(["git", "config", "-f", str(extra), key, value], check=True)
        git(repo, "config", "include.path", str(extra))
    else:
        git(repo, "config", key, value)
    (repo / "a.txt").write_text("changed\n")  # something to diff, clean and show
    subprocess.run(["touch", "-d", "2001-01-01", str(repo / "a.txt")], check=True)
    return mark


@pytest.mark.parametrize("via_include", [False, True], ids=["config", "include"])
@pytest.mark.parametrize("poison", sorted(HOSTILE_CONFIGS))
async def test_read_only_git_runs_no_configured_program(
    run: Runner, repo: Path, tmp_path: Path, poison: str, via_include: bool
) -> None:
    key, value = HOSTILE_CONFIGS[poison]
    mark = _poison(repo, tmp_path, key, value, via_include)
    for subcommand, args in READ_CALLS:
        # a neutralized driver may make git complain; it must not run anything
        with contextlib.suppress(ToolError):
            await run("git", subcommand=subcommand, args=args)
        assert not mark.exists(), f"git {subcommand} {args} ran {key}"


async def test_the_same_config_really_runs_programs_in_plain_git(
    repo: Path, tmp_path: Path
) -> None:
    """The control: without the tool's overrides, these configs do execute."""
    ran = []
    for poison in ("fsmonitor", "filter", "textconv"):  # a pager needs a terminal
        key, value = HOSTILE_CONFIGS[poison]
        mark = _poison(repo, tmp_path, key, value, via_include=False)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_PAGER": ""}
        for args in (["status"], ["diff"], ["-p", "log", "-p", "-1"]):
            subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=False)
        ran.append(mark.exists())
        mark.unlink(missing_ok=True)
        git(repo, "config", "--unset-all", key)
    assert all(ran), ran


async def test_write_subcommands_get_the_fixed_overrides(
    run: Runner, repo: Path, tmp_path: Path
) -> None:
    mark = _poison(repo, tmp_path, "core.fsmonitor", "touch {mark}; false", via_include=False)
    await run("git", subcommand="add", args=["a.txt"])
    await run("git", subcommand="commit", args=["-m", "second"])
    assert not mark.exists()


@pytest.mark.parametrize("poison", sorted(HOSTILE_CONFIGS))
def test_looms_own_git_status_runs_no_configured_program(
    repo: Path, tmp_path: Path, poison: str
) -> None:
    """gitmeta's status runs after every change the agent makes, with no tool call."""
    from loom.gitmeta import detect_remote_slug, detect_repo_status

    key, value = HOSTILE_CONFIGS[poison]
    mark = _poison(repo, tmp_path, key, value, via_include=False)
    status = detect_repo_status(repo)
    assert status is not None and status.is_dirty
    detect_remote_slug(repo)
    assert not mark.exists(), key


DANGEROUS_LONG = [
    "--pathspec-from-file", "--output", "--output-directory", "--exec-path", "--git-dir",
    "--work-tree", "--upload-pack", "--receive-pack", "--exec", "--ext-diff", "--textconv",
    "--config-env", "--no-index", "--show-signature", "--template", "--file", "--gpg-sign",
    "--orderfile", "--namespace", "--super-prefix", "--reuse-message", "--reedit-message",
    "--use-mailmap-file", "--mailmap-file", "--stdin", "--pathspec-file-nul", "--exclude-from",
]  # fmt: skip


def test_no_abbreviation_of_a_dangerous_option_gets_through(tmp_path: Path) -> None:
    """git accepts any unambiguous prefix of a long option; the allowlist takes exact
    names only, so every prefix of these is refused on every subcommand (or is itself an
    allowed, harmless option)."""
    from loom.tools._git_args import SPECS, check_arguments

    tried = 0
    for sub in [*SPECS, "stash"]:
        allowed = set(SPECS.get(sub, {}))
        for option in DANGEROUS_LONG:
            for end in range(4, len(option) + 1):
                for arg in (option[:end], option[:end] + "=/etc/hostname"):
                    if arg.split("=")[0] in allowed:
                        continue
                    tried += 1
                    with pytest.raises(ToolError):
                        check_arguments(sub, [arg], tmp_path)
    assert tried > 2000
