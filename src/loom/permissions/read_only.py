"""Which shell commands only read: those plan mode lets run (they still need what any
command needs: a grant, or a person's yes). Conservative: every part of the line must be
a literal simple command (`literal_commands`) of a program known to change nothing, with
none of the options that make it write or run something else."""

from __future__ import annotations

from loom.permissions.shell_rules import literal_commands

_READERS = {
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "echo", "printf",
    "file", "stat", "which", "type", "du", "df", "diff", "cmp", "nl", "cut", "tr", "uniq",
    "basename", "dirname", "realpath", "readlink", "true", "false", "test", "whoami",
    "uname", "id", "md5sum", "sha1sum", "sha256sum", "column", "jq", "comm", "tac", "rev",
    "seq",
}  # fmt: skip
# options that make a reader write a file or run a program: `rg --pre`, `git diff --output`
_WRITING_OPTIONS = (
    "--pre",
    "--output",
    "-O",
    "--open-files-in-pager",
    "--ext-diff",
    "-x",
    "--exec",
)
_GIT_READS = {
    "status", "log", "diff", "show", "blame", "grep", "ls-files", "ls-tree", "rev-parse",
    "describe", "shortlog", "cat-file", "rev-list", "whatchanged",
}  # fmt: skip
_FIND_WRITES = {
    "-exec",
    "-execdir",
    "-ok",
    "-okdir",
    "-delete",
    "-fprint",
    "-fprint0",
    "-fprintf",
    "-fls",
}


def _reads(words: tuple[str, ...]) -> bool:
    program, args = words[0], words[1:]
    if "/" in program:
        return False  # a program of the project's own, not the system's reader
    if program in ("env", "printenv"):
        return not args  # `env X=1 prog` runs prog
    if any(a.startswith(_WRITING_OPTIONS) for a in args):
        return False
    if program in _READERS or program == "rg":
        return True
    if program == "find":
        return not _FIND_WRITES.intersection(args)
    if program == "sed":
        return not any(a.startswith(("-i", "--in-place")) for a in args)
    if program == "sort":
        return not any(a.startswith(("-o", "--output")) for a in args)
    if program == "git":
        sub = next((a for a in args if not a.startswith("-")), "")
        options_first = args[:1] != (sub,)
        return sub in _GIT_READS and not options_first  # `git -c x=y log` may run programs
    return False


def read_only_command(command: str) -> bool:
    """True when every command of `command` only reads (see the module doc)."""
    commands = literal_commands(command)
    return bool(commands) and all(_reads(words) for words in commands or [])
