"""Read a shell command the way bash does, with tree-sitter-bash.

The permission rules must see what bash will run, not what a simpler tokenizer guesses:
`git status $'\\'' ; touch M ; #'` is one quoted word to `shlex` and two commands to
bash (ANSI-C quoting lets `\\'` escape a quote). tree-sitter-bash is a full grammar of
bash (ANSI-C and locale strings, every expansion, heredocs, redirections, compound
commands) that reports what it could not parse instead of guessing, and the project
already ships tree-sitter for repo intelligence; bashlex (the other candidate) is a
port of bash's 2014 parser without releases since 2023.

A word is *literal* when its value is fixed before bash runs it: plain characters,
backslash escapes, '...' and "..." without expansions inside. Anything else (`$x`,
`${x:-$(cmd)}`, `$'...'`, `$"..."`, `$(...)`, backquotes, `<(...)`, `$((...))`, brace
expansion, `~`, unquoted glob characters) is not, and a word that is not literal never
counts as what it looks like.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import Any

# Characters that mean something to bash when they are not quoted or escaped.
_ACTIVE = set("$`*?[]{}~()<>;&|!\"'\\ \t\n")
_GLOB = set("*?[")
_DOUBLE_QUOTE_ESCAPES = set('$`"\\\n')
_REDIRECTS = {"file_redirect", "heredoc_redirect", "herestring_redirect"}


@dataclass(frozen=True)
class Word:
    text: str  # the value after quote removal when literal, else the source text
    literal: bool
    glob: bool = False  # an unquoted * ? or [ (pathname expansion)


@dataclass(frozen=True)
class Redirect:
    operator: str  # ">", ">>", "<", ">&", "&>", "<<", "<<<", ...
    target: Word | None
    descriptor: str = ""


@dataclass(frozen=True)
class Command:
    """One simple command, wherever it sits in the tree (pipelines, lists, subshells,
    substitutions, loops...)."""

    words: tuple[Word, ...]
    assignments: tuple[str, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    name_literal: bool = True


@dataclass(frozen=True)
class Script:
    commands: tuple[Command, ...]
    single: bool  # the whole text is exactly one simple command, nothing around it
    plain: bool  # only simple commands joined by ; && || | |& (no &, subshells, loops...)
    error: bool  # tree-sitter could not parse all of it
    assignments: bool  # `x=1` on its own somewhere (it changes what later words mean)


_local = threading.local()


def _parser() -> Any:
    """This thread's parser: a tree-sitter Parser must never parse in two threads at
    once (permission checks run on the event loop and on worker threads; a shared one
    crashed a test process with a segmentation fault)."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter

        parser = _local.parser = tree_sitter.Parser(_language())
    return parser


@functools.lru_cache(maxsize=1)
def _language() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Language(tree_sitter_bash.language())


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _unquoted(raw: str) -> Word:
    """A bare word: backslash escapes make a character literal; active ones do not."""
    out: list[str] = []
    literal, glob = True, False
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "\\" and index + 1 < len(raw):
            out.append(raw[index + 1])
            index += 2
            continue
        if char in _ACTIVE:
            literal = False
            glob = glob or char in _GLOB
        out.append(char)
        index += 1
    return Word("".join(out) if literal else raw, literal, glob)


def _double_quoted(node: Any) -> Word:
    raw = _text(node)
    if any(child.type != "string_content" for child in node.named_children):
        return Word(raw, False)
    inner = raw[1:-1]
    out: list[str] = []
    index = 0
    while index < len(inner):
        char = inner[index]
        if char == "\\" and index + 1 < len(inner) and inner[index + 1] in _DOUBLE_QUOTE_ESCAPES:
            out.append(inner[index + 1])
            index += 2
            continue
        if char in "$`":
            return Word(raw, False)
        out.append(char)
        index += 1
    return Word("".join(out), True)


def word_of(node: Any) -> Word:
    kind = node.type
    if kind in ("word", "number"):
        return _unquoted(_text(node))
    if kind == "raw_string":
        return Word(_text(node)[1:-1], True)
    if kind == "string":
        return _double_quoted(node)
    if kind == "concatenation":
        parts = [word_of(child) for child in node.children]
        if all(part.literal for part in parts):
            return Word("".join(part.text for part in parts), True)
        return Word(_text(node), False, any(part.glob for part in parts))
    # ansi_c_string, translated_string, expansions, substitutions, brace expressions...
    return Word(_text(node), False)


def _redirect(node: Any) -> tuple[Redirect, list[Word]]:
    """The redirect, and words tree-sitter hangs on it that are really arguments
    (`rm -rf >/dev/null /`: bash passes `/` to rm)."""
    operator = next((_text(c) for c in node.children if not c.is_named), "")
    descriptor = ""
    targets: list[Word] = []
    for child in node.named_children:
        if child.type == "file_descriptor":
            descriptor = _text(child)
        elif child.type in ("heredoc_start", "heredoc_body", "heredoc_end"):
            continue
        else:
            targets.append(word_of(child))
    target = targets[0] if targets else None
    return Redirect(operator, target, descriptor), targets[1:]


def _command(node: Any, outer_redirects: list[Any]) -> Command:
    words: list[Word] = []
    assignments: list[str] = []
    redirects: list[Redirect] = []
    name_literal = True
    for child in node.named_children:
        if child.type == "command_name":
            inner = child.named_children[0] if child.named_children else child
            word = word_of(inner)
            name_literal = word.literal
            words.append(word)
        elif child.type == "variable_assignment":
            assignments.append(_text(child))
        elif child.type in _REDIRECTS:
            redirect, extra = _redirect(child)
            redirects.append(redirect)
            words += extra
        else:
            words.append(word_of(child))
    for child in outer_redirects:
        redirect, extra = _redirect(child)
        redirects.append(redirect)
        words += extra
    return Command(tuple(words), tuple(assignments), tuple(redirects), name_literal)


def _walk(root: Any, found: list[Command], flags: dict[str, bool]) -> None:
    """Every simple command under `root`, in source order. A loop over a stack, not
    recursion: `a && b && ...` nests one node per operator, and the model's command can
    hold thousands of them."""
    stack: list[tuple[bool, Any]] = [(False, root)]  # (inside a command's words, node)
    while stack:
        inside, node = stack.pop()
        later: list[tuple[bool, Any]] = []  # visited in this order, after `node`
        if inside:
            # commands nested in a command's words: substitutions run too
            substitution = node.type in ("command_substitution", "process_substitution")
            later = [(not substitution, child) for child in node.named_children]
        elif node.type == "redirected_statement":
            body = node.child_by_field_name("body")
            outer = [c for c in node.named_children if c.type in _REDIRECTS]
            if body is not None and body.type == "command":
                found.append(_command(body, outer))
                later = [(True, child) for child in body.named_children]
            else:
                # redirects on a compound statement: judged as a command without words
                found.append(_command_from_redirects(outer))
                later = [(False, body)] if body is not None else []
            later += [(True, child) for child in outer]
        elif node.type == "command":
            found.append(_command(node, []))
            later = [(True, child) for child in node.named_children]
        else:
            if node.type == "variable_assignment" and node.parent is not None:
                flags["assignments"] = True
            later = [(False, child) for child in node.named_children]
        stack.extend(reversed(later))


def _command_from_redirects(nodes: list[Any]) -> Command:
    redirects = []
    words: list[Word] = []
    for child in nodes:
        redirect, extra = _redirect(child)
        redirects.append(redirect)
        words += extra
    return Command(tuple(words), (), tuple(redirects), True)


@functools.lru_cache(maxsize=256)
def parse(command: str) -> Script:
    tree = _parser().parse(command.encode("utf-8", "surrogatepass"))
    root = tree.root_node
    found: list[Command] = []
    flags = {"assignments": False}
    _walk(root, found, flags)
    single = (
        root.child_count == 1
        and root.children[0].type in ("command", "redirected_statement")
        and len(found) == 1
    )
    plain = all(_plain(child) for child in root.children)
    return Script(tuple(found), single, plain, root.has_error, flags["assignments"])


_JOINERS = {";", "&&", "||", "|", "|&", "\n"}


def _plain(node: Any) -> bool:
    stack = [node]
    while stack:
        node = stack.pop()
        if not node.is_named:
            if node.type not in _JOINERS:
                return False
        elif node.type == "redirected_statement":
            body = node.child_by_field_name("body")
            if body is None or body.type != "command":
                return False
        elif node.type in ("pipeline", "list"):
            stack.extend(node.children)
        elif node.type != "command":
            return False  # subshells, compound statements, loops, functions, comments, ...
    return True
