"""The floor: shell commands no grant, auto-approval or `auto_approve_all` ever covers.

They always go back to the person (or are refused, if the policy is configured with
`dangerous="deny"`). The list is deliberately small and aimed at damage that cannot be
undone: wiping the disk or home folder, formatting devices, fork bombs, piping a download
into a shell, force-pushing main, opening up permissions on the whole system, shutting
the machine down.
"""

from __future__ import annotations

import posixpath
import re

from loom.permissions.bash_syntax import parse
from loom.permissions.raw_patterns import raw_reason
from loom.permissions.shell_rules import SimpleCommand, parse_command
from loom.permissions.wrappers import unwrap

# Commands that delete or change files: a path they get must be known before they run.
_DESTRUCTIVE = {
    "rm", "rmdir", "unlink", "shred", "chmod", "chown", "chgrp", "dd", "truncate", "mv",
    "srm", "wipe",
}  # fmt: skip

_SYSTEM_DIRS = {
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib64",
    "opt",
    "proc",
    "root",
    "sbin",
    "srv",
    "sys",
    "usr",
    "var",
    "Users",
    "System",
    "Library",
    "Applications",
}


def _root_like(target: str) -> bool:
    """`/`, `/*`, `~`, `$HOME`, `/usr`, `.`, `..`, `*`: targets of a wipe-everything,
    also spelled with `.` and `..` steps (`/./usr`, `/home/../usr`, `~/.`)."""
    return _root_like_as_written(target) or _root_like_as_written(_normal(target))


_HOME_PREFIXES = ("~", "${HOME}", "$HOME")


def _normal(target: str) -> str:
    """`target` with `//`, `.` and `..` steps folded as the path would resolve (symlinks
    aside): `/./usr` -> `/usr`, `/home/../` -> `/`, `~/.` -> `~`, `././` -> `.`."""
    for prefix in _HOME_PREFIXES:
        if target == prefix or target.startswith(prefix + "/"):
            rest = _fold("/" + target[len(prefix) :])
            return prefix if rest == "/" else prefix + rest
    return _fold(target) if target else target


def _fold(path: str) -> str:
    folded = posixpath.normpath(path)
    return "/" + folded.lstrip("/") if folded.startswith("//") else folded


def _root_like_as_written(target: str) -> bool:
    bare = target.rstrip("/") or "/"
    if bare in {"/", "/*", "~", "~/*", "$HOME", "${HOME}", "$HOME/*", ".", "..", "*", "./*"}:
        return True
    parts = [p for p in bare.split("/") if p]
    return bare.startswith("/") and len(parts) == 1 and parts[0].rstrip("*") in _SYSTEM_DIRS


def _flags(words: tuple[str, ...]) -> set[str]:
    found: set[str] = set()
    for word in words:
        if word.startswith("--"):
            found.add(word)
        elif word.startswith("-") and len(word) > 1:
            found.update(f"-{ch}" for ch in word[1:])
    return found


# `bash -c "bash -c ..."` is judged level by level; deeper than this is refused (a model
# that nests a thousand levels gets no recursion error and no quadratic re-parse).
MAX_NESTING = 4


def _simple_reason(simple: SimpleCommand, depth: int = 0) -> str | None:
    unwrapped = unwrap(simple.words)
    for script in unwrapped.scripts:  # `env -S 'rm -rf /'`, `su -c ...`, `watch ...`
        if depth >= MAX_NESTING:
            return f"commands nested more than {MAX_NESTING} deep cannot be judged"
        reason = dangerous_reason(script, depth + 1)
        if reason:
            return reason
    words = simple.words[unwrapped.start :]
    if not words:
        return None
    program, args = words[0].rsplit("/", 1)[-1], words[1:]
    if program != "git":  # `git rm -r --cached .` only untracks
        reason = _buried_reason(simple.words)
        if reason:
            return reason
    if program in {"sh", "bash", "zsh", "dash", "ksh", "eval"}:  # `bash -c "rm -rf /"`
        inner = args[args.index("-c") + 1 :] if "-c" in args else args
        if program == "eval" or "-c" in args:
            if not inner:
                return None
            if depth >= MAX_NESTING:
                return f"commands nested more than {MAX_NESTING} deep in {program} cannot be judged"
            return dangerous_reason(" ".join(inner), depth + 1)
    flags = _flags(args)
    targets = [a for a in args if not a.startswith("-")]
    recursive = bool(flags & {"-r", "-R", "--recursive"})
    if program == "rm" and (
        "--no-preserve-root" in flags or (recursive and any(map(_root_like, targets)))
    ):
        return "recursively deleting the root, home or project folder"
    if program.startswith("mkfs") or program in {"mke2fs", "wipefs"}:
        return "formatting a file system"
    if program == "dd" and any(a.startswith("of=/dev/") for a in args):
        return "writing raw data to a device"
    if (
        program in {"chmod", "chown", "chgrp"}
        and any(map(_root_like, targets[1:]))
        and (recursive or any(t.rstrip("/") == "" for t in targets[1:]))
    ):
        return f"{program} on the whole system"
    if program in {"shutdown", "reboot", "halt", "poweroff"}:
        return "shutting the machine down"
    if program == "init" and targets[:1] in (["0"], ["6"]):
        return "shutting the machine down"
    if (
        program == "systemctl"
        and targets[:1]
        and targets[0] in {"poweroff", "reboot", "halt", "kexec", "suspend", "hibernate"}
    ):
        return "shutting the machine down"
    if program in {"kill", "pkill"} and "-1" in args:
        return "killing every process"
    if program == "git" and "push" in targets[:3]:  # also `git -C dir push ...`
        return _force_push_reason(args[args.index("push") :])
    if program == "find":
        return _find_reason(args)
    if program == "rsync":
        return _rsync_reason(args, flags, targets)
    return None


def _buried_reason(words: tuple[str, ...]) -> str | None:
    """`rm` anywhere in the words with a recursive flag and a root-like target after it:
    whatever ran it (a wrapper or option this module does not know), it is judged. One
    pass from the end, so linear in the number of words."""
    recursive = root_target = no_preserve = False
    for word in reversed(words):
        if word in {"-r", "-R", "--recursive"} or (
            word.startswith("-") and not word.startswith("--") and set(word[1:]) & {"r", "R"}
        ):
            recursive = True
        elif word == "--no-preserve-root":
            no_preserve = True
        elif _root_like(word):
            root_target = True
        elif word.rsplit("/", 1)[-1] == "rm" and (no_preserve or (recursive and root_target)):
            return "recursively deleting the root, home or project folder"
    return None


# find's tests that pick some files: with one of them, `find . ... -delete` is selective.
_FIND_SELECTORS = {
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
    "-newer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size", "-empty",
    "-user", "-group", "-perm", "-inum", "-samefile", "-links", "-lname", "-ilname",
}  # fmt: skip
_FIND_RUNS = {"-exec", "-execdir", "-ok", "-okdir"}


def _find_reason(args: tuple[str, ...]) -> str | None:
    """`find / -delete`, `find ~ -exec rm -rf {} +`, `find . -delete` (everything)."""
    starts: list[str] = []
    for word in args:
        if word.startswith(("-", "(", "!")) and word not in ("-", "--"):
            break
        starts.append(word)
    deletes = "-delete" in args
    for index, word in enumerate(args):
        if word in _FIND_RUNS and index + 1 < len(args):
            program = args[index + 1].rsplit("/", 1)[-1]
            deletes = deletes or program in _DESTRUCTIVE or program in {"sh", "bash"}
    if not deletes:
        return None
    if any(_root_like(s) and _normal(s).rstrip("/") not in {".", "..", "*", "./*"} for s in starts):
        return "find deleting files under the root or home folder"
    if (not starts or any(map(_root_like, starts))) and not _FIND_SELECTORS & set(args):
        return "find deleting every file of the project"
    return None


def _rsync_reason(args: tuple[str, ...], flags: set[str], targets: list[str]) -> str | None:
    """`rsync -a --delete empty/ /` (or ~, or .): deletes what the source lacks."""
    deleting = any(f == "--del" or f.startswith("--delete") for f in flags)
    if deleting and len(targets) >= 2 and _root_like(targets[-1]):
        return "rsync --delete onto the root, home or project folder"
    if "--remove-source-files" in flags and any(map(_root_like, targets[:-1])):
        return "rsync removing the root, home or project folder's files"
    return None


def _force_push_reason(args: tuple[str, ...]) -> str | None:
    flags = _flags(args)
    refspecs = [a for a in args[1:] if not a.startswith("-")][1:]  # after the remote
    forced = bool(flags & {"-f", "--force", "--force-with-lease", "--mirror"}) or any(
        r.startswith("+") for r in refspecs
    )
    if not forced:
        return None
    protected = {"main", "master", "trunk", "HEAD"}
    names = {r.lstrip("+").split(":")[-1].removeprefix("refs/heads/") for r in refspecs}
    if not refspecs or names & protected or "--mirror" in flags:
        return "force-pushing the main branch"
    return None


def _unwrapped(simple: SimpleCommand) -> tuple[int, bool]:
    """Where the command that really runs starts in `simple.words` (after `sudo`, `env`,
    `xargs`, `VAR=1`, ...), and whether `xargs` feeds it arguments read from input."""
    unwrapped = unwrap(simple.words, simple.is_literal)
    return unwrapped.start, unwrapped.from_input


def _syntax_reason(simple: SimpleCommand) -> str | None:
    """What the parsed tree shows: a command word that is not a literal, or paths of a
    destructive command that are computed at run time or globbed outside the project."""
    start, from_input = _unwrapped(simple)
    if start >= len(simple.words):
        return None
    if not simple.is_literal(start):
        return (
            f"the command to run ({simple.words[start]}) is computed when it runs, so it "
            "cannot be judged before"
        )
    program = simple.words[start].rsplit("/", 1)[-1]
    rest = set(simple.words[start + 1 :])
    if from_input and program == "find" and ("-delete" in rest or rest & _FIND_RUNS):
        return "find deleting files in folders read from input (xargs)"
    if program not in _DESTRUCTIVE:
        return None
    if from_input:
        return f"{program} with arguments read from input (xargs)"
    for index in range(start + 1, len(simple.words)):
        word = simple.words[index]
        if simple.is_literal(index):
            continue
        if any(mark in word for mark in ("$", "`", "<(", "~")) or not simple.is_glob(index):
            return f"{program} on a path computed when it runs ({word})"
        outside = word.startswith("/") or ".." in word.split("/")
        if outside or _root_like(word):
            return f"{program} on a glob that can reach outside the project ({word})"
    return None


def dangerous_reason(command: str, depth: int = 0) -> str | None:
    """Why `command` is on the floor, or None when it is not."""
    reason = raw_reason(command)
    if reason:
        return reason
    parsed = parse_command(command)
    for simple in parsed.commands:
        reason = _simple_reason(simple, depth) or _syntax_reason(simple)
        if reason:
            return reason
    if parse(command).error:
        return "the command could not be parsed as shell syntax, so it cannot be judged"
    # Also judge a crude split on operators, ignoring quotes and escapes: the floor may
    # over-ask (`git commit -m "not; rm -rf /"`) but quoting tricks never slip past it.
    for part in re.split(r"[;&|\n]+", command):
        words = tuple(part.replace("'", " ").replace('"', " ").replace("\\", " ").split())
        reason = _simple_reason(SimpleCommand(words), depth) if words else None
        if reason:
            return reason
    return None
