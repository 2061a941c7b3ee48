"""How the permission rules read a shell command: split it into simple commands, find the
dangerous ones, and name the command prefix an `allow_always` grant is scoped to.

Commands are read with bash's grammar (`bash_syntax`, tree-sitter-bash). Everything here
is conservative: a command that does not parse, or whose words are not all literal
(expansions, substitutions, ANSI-C quoting, globs), or that redirects into files, is
never covered by a prefix grant and always goes back to the person.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from loom.core.protected_paths import path_reason
from loom.permissions.bash_syntax import Script, parse

# Operators that join simple commands; each side must be judged on its own.
_JOINERS = {";", "&&", "||", "|", "&", "|&", ";;", ";&"}
_REDIRECTS = {">", ">>", "<", "<<", "<<<", ">&", "&>", "&>>", "<&", ">|", "<>"}
_SAFE_REDIRECT_OPERATORS = {">", ">>", ">&", "&>", "&>>", ">|"}  # harmless into /dev/null
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
    """One command of a (possibly compound) command line. `words` are the values bash
    will see for literal words and the source text for the others; `literal` says
    which is which (all True when the text did not parse and was split crudely)."""

    words: tuple[str, ...]
    redirects: tuple[tuple[str, str], ...] = ()
    literal: tuple[bool, ...] = ()
    globs: tuple[bool, ...] = ()
    assignments: tuple[str, ...] = ()

    @property
    def all_literal(self) -> bool:
        return all(self.literal) if self.literal else True

    def is_literal(self, index: int) -> bool:
        return self.literal[index] if index < len(self.literal) else True

    def is_glob(self, index: int) -> bool:
        return self.globs[index] if index < len(self.globs) else False


@dataclass(frozen=True)
class ParsedCommand:
    commands: tuple[SimpleCommand, ...]
    compound: bool  # more than one simple command, or anything around it
    opaque: bool  # runs code we cannot see ($(...), `...`, <(...)), or did not parse


def _from_script(script: Script) -> ParsedCommand:
    commands = tuple(
        SimpleCommand(
            tuple(w.text for w in c.words),
            tuple((r.operator, r.target.text if r.target else "") for r in c.redirects),
            tuple(w.literal for w in c.words),
            tuple(w.glob for w in c.words),
            c.assignments,
        )
        for c in script.commands
    )
    opaque = script.error or script.assignments or not all(c.all_literal for c in commands)
    return ParsedCommand(commands, not script.single, opaque)


def parse_command(command: str) -> ParsedCommand:
    """The simple commands in `command`, read by bash's grammar (`bash_syntax`). Text that
    does not parse is split crudely as well (and is opaque), so rules can still judge it."""
    script = parse(command)
    parsed = _from_script(script)
    if not script.error:
        return parsed
    crude = _parse_with_shlex(command)
    return ParsedCommand(parsed.commands + crude.commands, True, True)


def _parse_with_shlex(command: str) -> ParsedCommand:
    """The old tokenizer, kept for text tree-sitter cannot parse: crude, and opaque."""
    opaque = True
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


def literal_commands(command: str) -> list[tuple[str, ...]] | None:
    """The words of each command when bash's grammar shows only simple commands joined by
    `;`, `&&`, `||` or `|` (no `&`, subshells, loops, functions), every word literal, no
    variable assignments and no redirection other than into /dev/null or between stdout
    and stderr; else None."""
    script = parse(command)
    if script.error or not script.plain or script.assignments or not script.commands:
        return None
    found: list[tuple[str, ...]] = []
    for simple in _from_script(script).commands:
        if simple.assignments or not simple.all_literal or not simple.words:
            return None
        for operator, target in simple.redirects:
            duplicates = operator == ">&" and target in ("1", "2", "-")  # 2>&1
            if not duplicates and (
                operator not in _SAFE_REDIRECT_OPERATORS or target != "/dev/null"
            ):
                return None
        found.append(simple.words)
    return found


def command_prefix(command: str) -> str | None:
    """The prefix an `allow_always` grant for `command` covers: `pytest`, `git status`,
    `npm run test`, `python -m pytest`. None unless the command is one literal simple
    command (see `literal_commands`), or when the prefix would be an interpreter's name
    alone (`python3 x.py`, `bash -c ...`): such a grant covers that exact command (or a
    prefix the person types)."""
    found = literal_commands(command)
    if not found or len(found) != 1:
        return None
    words = found[0]
    if any(not w or w.split() != [w] for w in words[:3]):
        return None  # a word with spaces would not survive the grant's text form
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


def prefix_refusal(prefix: str) -> str | None:
    """Why a command prefix a person typed cannot be granted, or None when it can: an
    interpreter's name alone, or with options only (`python3`, `bash -c`, `python3 -m`),
    would cover whatever code it is given."""
    words = prefix.split()
    if not words or not _is_interpreter(words[0]):
        return None
    if any(not word.startswith("-") for word in words[1:]):
        return None  # `python3 -m pytest`, `node build.js`: it names what runs
    return (
        f"`{prefix.strip()}` would run any code at all: an interpreter is never granted by "
        f"its name alone; type more of the command (a script or `-m module`)"
    )


def _is_interpreter(program: str) -> bool:
    """`python3`, `/usr/bin/python3.12`, `node`, `bash`..."""
    name = program.rsplit("/", 1)[-1]
    return name in INTERPRETERS or name.rstrip("0123456789.") in INTERPRETERS


def covered_by_prefixes(command: str, prefixes: list[str]) -> bool:
    """True when `command` is literal simple commands (`literal_commands`), each starting
    with one of `prefixes`, word for word.

    `pytest` covers `pytest -x tests/` but not `pytest; rm -rf x` (unless `rm` is granted
    too), `pytest > out.txt`, `pytest $(rm x)`, `pytest $'\\'' ; rm x ; #'`, `X=1 pytest`,
    `pytest *`, `pytest &` or `pytest-foo`: anything else goes back to the person.
    """
    wanted = [tuple(prefix.split()) for prefix in prefixes if prefix.split()]
    found = literal_commands(command)
    if not wanted or not found:
        return False
    if any(path_reason(word) for words in found for word in words[1:]):
        return False  # `cp x .git/config` under a `cp` grant: writing there always asks
    return all(any(words[: len(w)] == w for w in wanted) for words in found)


def normalize_command(command: str) -> str:
    return " ".join(command.split())
