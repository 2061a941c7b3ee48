"""How the permission rules read a shell command: split it into simple commands, find the
dangerous ones, and name the command prefix an `allow_always` grant is scoped to.

Everything here is conservative: a command we cannot parse, or one that runs code we
cannot see (command substitution, process substitution, redirection into files), is never
covered by a prefix grant and always goes back to the person.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

# Operators that join simple commands; each side must be judged on its own.
_JOINERS = {";", "&&", "||", "|", "&", "|&", ";;", ";&"}
_REDIRECTS = {">", ">>", "<", "<<", "<<<", ">&", "&>", "&>>", "<&", ">|", "<>"}
_HARMLESS_REDIRECT_TARGETS = {"&1", "&2", "1", "2", "/dev/null", "-"}
# Words that run the rest of the line as a command; the rest is what we judge.
_WRAPPERS = {"sudo", "doas", "env", "command", "exec", "nohup", "time", "nice", "builtin"}
# Programs whose first argument is a subcommand worth keeping in a grant's scope.
_SUBCOMMAND_PROGRAMS = {
    "git",
    "cargo",
    "go",
    "docker",
    "podman",
    "kubectl",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "uv",
    "poetry",
    "pip",
    "pip3",
    "hatch",
    "pdm",
    "dotnet",
    "mvn",
    "gradle",
    "terraform",
    "helm",
    "brew",
    "apt",
    "apt-get",
    "systemctl",
    "gh",
    "rustup",
    "conda",
    "mix",
    "bundle",
}
_RUNNERS = {"run", "exec", "x", "dlx"}  # `npm run test`: keep the script name too
# Programs that run whatever code they are given: their name alone says nothing about
# what a command does, so a grant never covers "every `python3 ...` command".
INTERPRETERS = {
    "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun",
    "bash", "sh", "zsh", "dash", "ksh", "fish", "perl", "ruby", "php", "lua", "Rscript",
    "pwsh", "powershell", "osascript", "tclsh", "awk", "gawk", "xargs",
}  # fmt: skip


@dataclass(frozen=True)
class SimpleCommand:
    """One command of a (possibly compound) command line."""

    words: tuple[str, ...]
    redirects: tuple[tuple[str, str], ...] = ()

    @property
    def writes_files(self) -> bool:
        return any(target not in _HARMLESS_REDIRECT_TARGETS for _, target in self.redirects)


@dataclass(frozen=True)
class ParsedCommand:
    commands: tuple[SimpleCommand, ...]
    compound: bool  # joined by ; && || | & or newlines
    opaque: bool  # runs code we cannot see ($(...), `...`, <(...)), or did not parse


def parse_command(command: str) -> ParsedCommand:
    opaque = any(marker in command for marker in ("`", "$(", "<(", ">("))
    commands: list[SimpleCommand] = []
    compound = False
    # Newlines separate commands too; shlex would treat them as spaces.
    lines = [line for line in re.split(r"[\r\n]+", command) if line.strip()]
    if len(lines) > 1:
        compound = True
    for line in lines:
        try:
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>()")
            lexer.whitespace_split = True
            # shlex would drop everything after a `#`, even in `a#b; rm x`: keep it all
            # and treat a word starting with `#` as opaque instead.
            lexer.commenters = ""
            tokens = list(lexer)
        except ValueError:  # unbalanced quotes and the like: split crudely, judge each part
            parts = [p.replace("'", " ").replace('"', " ") for p in re.split(r"[;&|]+", line)]
            commands += [SimpleCommand(tuple(p.split())) for p in parts if p.split()]
            opaque = True
            continue
        words: list[str] = []
        redirects: list[tuple[str, str]] = []
        index = 0
        while index < len(tokens):
            token = tokens[index]
            if token in _JOINERS:
                compound = True
                if words or redirects:
                    commands.append(SimpleCommand(tuple(words), tuple(redirects)))
                words, redirects = [], []
            elif token in _REDIRECTS:
                target = tokens[index + 1] if index + 1 < len(tokens) else ""
                if words and words[-1].isdigit():  # `2>` reads as word "2" then ">"
                    words.pop()
                redirects.append((token, target))
                index += 1
            elif set(token) <= set(";&|<>()"):
                # subshells and odd runs like `&;`: a separator, and nothing a grant covers
                opaque = compound = True
                if words or redirects:
                    commands.append(SimpleCommand(tuple(words), tuple(redirects)))
                words, redirects = [], []
            else:
                opaque = opaque or token.startswith("#")
                words.append(token)
            index += 1
        if words or redirects:
            commands.append(SimpleCommand(tuple(words), tuple(redirects)))
    return ParsedCommand(tuple(commands), compound, opaque)


def strip_wrappers(words: tuple[str, ...]) -> tuple[str, ...]:
    """`sudo -u x env A=1 rm -rf /` -> `rm -rf /` (for the danger check only)."""
    rest = list(words)
    while rest:
        head = rest[0]
        if head in _WRAPPERS:
            rest.pop(0)
            while rest and (rest[0].startswith("-") or "=" in rest[0]):
                rest.pop(0)
        elif "=" in head and not head.startswith("="):  # VAR=value prefix
            rest.pop(0)
        else:
            break
    if rest:
        rest[0] = rest[0].rsplit("/", 1)[-1]  # /bin/rm -> rm
    return tuple(rest)


def command_prefix(command: str) -> str | None:
    """The prefix an `allow_always` grant for `command` covers: `pytest`, `git status`,
    `npm run test`, `python -m pytest`. None when the command is compound or opaque, or
    when the prefix would be an interpreter's name alone (`python3 x.py`, `bash -c ...`):
    such a grant covers that exact command (or a prefix the person types)."""
    parsed = parse_command(command)
    if parsed.compound or parsed.opaque or len(parsed.commands) != 1:
        return None
    words = parsed.commands[0].words
    if not words:
        return None
    program = words[0]
    prefix = [program]
    rest = list(words[1:])
    if program.rsplit("/", 1)[-1].startswith("python") and rest[:1] == ["-m"] and len(rest) > 1:
        prefix += rest[:2]
    elif program in _SUBCOMMAND_PROGRAMS and rest and not rest[0].startswith("-"):
        prefix.append(rest[0])
        if rest[0] in _RUNNERS and len(rest) > 1 and not rest[1].startswith("-"):
            prefix.append(rest[1])
    if len(prefix) == 1 and _is_interpreter(program):
        return None
    return " ".join(prefix)


def _is_interpreter(program: str) -> bool:
    """`python3`, `/usr/bin/python3.12`, `node`, `bash`..."""
    name = program.rsplit("/", 1)[-1]
    return name in INTERPRETERS or name.rstrip("0123456789.") in INTERPRETERS


def covered_by_prefixes(command: str, prefixes: list[str]) -> bool:
    """True when every part of `command` is a plain command starting with one of `prefixes`.

    `pytest` covers `pytest -x tests/` but not `pytest; rm -rf x` (unless `rm` is granted
    too), `pytest > out.txt`, `pytest $(rm x)`, `pytest\nrm x` or `pytest-foo`.
    """
    wanted = [tuple(prefix.split()) for prefix in prefixes if prefix.split()]
    parsed = parse_command(command)
    if not wanted or parsed.opaque or not parsed.commands:
        return False
    for simple in parsed.commands:
        if simple.writes_files or not simple.words:
            return False
        if not any(simple.words[: len(w)] == w for w in wanted):
            return False
    return True


def normalize_command(command: str) -> str:
    return " ".join(command.split())
