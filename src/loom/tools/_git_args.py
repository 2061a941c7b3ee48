"""Which arguments the git tool passes on: an allowlist per subcommand.

Every option must be on the subcommand's list (git's unambiguous abbreviations, such as
`--pathspec-from` for `--pathspec-from-file`, are therefore refused too). Options that
read or write files (`--output`, `--pathspec-from-file`, `-F`, `--template`, `-O`),
run programs (`--ext-diff`, `--textconv`, `--show-signature`, `-S`/`--gpg-sign`) or
leave the repository (`--no-index`, `-C`, `--git-dir`, `--work-tree`, `-c`, `--exec-path`)
are simply not on any list. Positional arguments that could name files (absolute, `~`,
`..`, or present on disk) are confined to the project like the file tools' paths:
`git diff /etc/passwd /dev/null` would otherwise diff outside files (implicit
`--no-index`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from loom.tools._paths import confine
from loom.tools.base import ToolError

FLAG, VALUE, OPTIONAL = "flag", "value", "optional"  # OPTIONAL: only `--opt=value`/`-Xvalue`
Spec = dict[str, str]


def _flags(names: str) -> Spec:
    return dict.fromkeys(names.split(), FLAG)


def _values(names: str) -> Spec:
    return dict.fromkeys(names.split(), VALUE)


def _optionals(names: str) -> Spec:
    return dict.fromkeys(names.split(), OPTIONAL)


_DIFF: Spec = {
    **_flags(
        "--numstat --shortstat --compact-summary --summary --name-only --name-status "
        "--patch -p -u --no-patch -s --raw --patch-with-stat --patch-with-raw "
        "--function-context -W --minimal --patience --histogram --no-color -w "
        "--ignore-all-space -b --ignore-space-change --ignore-space-at-eol "
        "--ignore-cr-at-eol --ignore-blank-lines --check -R --no-relative -a --text "
        "--binary --full-index --find-copies-harder --no-renames -D --irreversible-delete "
        "--pickaxe-all --pickaxe-regex -z --no-prefix --default-prefix --exit-code "
        "--quiet --indent-heuristic --no-indent-heuristic --ita-invisible-in-index "
        "--ita-visible-in-index --no-ext-diff --no-textconv --color-moved-ws "
        "--no-color-moved"
    ),
    **_values(
        "--unified -U --inter-hunk-context --diff-algorithm --anchored --word-diff-regex "
        "--ignore-matching-lines -I -l --diff-filter -S -G --src-prefix --dst-prefix "
        "--line-prefix --output-indicator-new --output-indicator-old "
        "--output-indicator-context --skip-to --rotate-to"
    ),
    **_optionals(
        "--stat --dirstat --word-diff --color-words --relative --abbrev -M --find-renames "
        "-C --find-copies -B --break-rewrites --ignore-submodules --submodule"
    ),
}
_LOG: Spec = {
    **_flags(
        "--oneline --graph --abbrev-commit --no-abbrev-commit --no-merges --merges "
        "--first-parent --reverse --follow --source --left-right --cherry --cherry-pick "
        "--cherry-mark --ancestry-path --topo-order --date-order --author-date-order -i "
        "--regexp-ignore-case -E --extended-regexp -F --fixed-strings -P --perl-regexp "
        "--invert-grep --all-match --boundary --parents --children "
        "--simplify-by-decoration --full-history --dense --sparse --simplify-merges "
        "--do-walk --use-mailmap --mailmap --no-use-mailmap --no-mailmap --log-size "
        "--walk-reflogs -g --relative-date --no-notes --no-decorate --clear-decorations "
        "--no-expand-tabs -m --cc --dd --remerge-diff --no-diff-merges "
        "--combined-all-paths -t --no-walk --all"
    ),
    **_values(
        "-n --max-count --skip --since --after --until --before --author --committer "
        "--grep --min-parents --max-parents --exclude --decorate-refs "
        "--decorate-refs-exclude --date --encoding --diff-merges --since-as-filter"
    ),
    **_optionals(
        "--branches --tags --remotes --glob --notes --show-notes --decorate --format "
        "--pretty --expand-tabs"
    ),
}
_STATUS: Spec = {
    **_flags(
        "-s --short -b --branch --show-stash --long -v --verbose -z --ahead-behind "
        "--no-ahead-behind --renames --no-renames --no-column"
    ),
    **_optionals("--porcelain -u --untracked-files --ignored --ignore-submodules --find-renames"),
}
_BRANCH: Spec = {
    **_flags(
        "-a --all -r --remotes -v -vv --verbose --list -l --show-current --no-abbrev -i "
        "--ignore-case --omit-empty --no-column"
    ),
    **_values("--contains --no-contains --points-at --sort --format"),
    **_optionals("--merged --no-merged --abbrev"),
}
_ADD: Spec = {
    **_flags(
        "-A --all --no-all -u --update -n --dry-run -v --verbose -f --force -N "
        "--intent-to-add --renormalize --ignore-errors --ignore-missing --refresh "
        "--sparse --ignore-removal --no-ignore-removal"
    ),
    **_values("--chmod"),
}
_COMMIT: Spec = {
    **_flags(
        "-a --all --amend --no-edit --allow-empty --allow-empty-message -s --signoff "
        "--no-signoff -n --no-verify --verify -q --quiet -v --verbose --only -o -i "
        "--include --reset-author --dry-run --short --long --porcelain -z --null "
        "--no-gpg-sign --status --no-status"
    ),
    **_values("-m --message --author --date --cleanup --trailer --fixup --squash"),
    **_optionals("-u --untracked-files"),
}
_STASH: dict[str, Spec] = {
    "push": {
        **_flags(
            "-u --include-untracked --no-include-untracked -k --keep-index --no-keep-index "
            "--staged -S -a --all -q --quiet"
        ),
        **_values("-m --message"),
    },
    "list": _LOG,
    "show": {**_DIFF, **_flags("--include-untracked --only-untracked --no-include-untracked")},
    "pop": _flags("--index -q --quiet"),
    "apply": _flags("--index -q --quiet"),
}
SPECS: dict[str, Spec] = {
    "status": _STATUS,
    "diff": {**_DIFF, **_flags("--cached --staged --merge-base")},
    "log": {**_LOG, **_DIFF},
    "show": {**_LOG, **_DIFF},
    "branch": _BRANCH,
    "add": _ADD,
    "commit": _COMMIT,
}
STASH_ACTIONS = tuple(_STASH)
_BRANCH_ONLY_LISTS = (
    "git branch only lists branches here (flags: -a, -r, -v, --list PATTERN, "
    "--show-current). Creating, renaming or deleting branches is not supported."
)
_NUMBER = re.compile(r"^-\d+$")  # `log -5`


def _refuse(sub: str, arg: str) -> ToolError:
    if sub == "branch":
        return ToolError(_BRANCH_ONLY_LISTS)
    return ToolError(
        f"git {sub}: the option {arg!r} is not allowed here (options that read or write "
        "files outside git, run other programs or leave the project are refused). "
        "Leave it out, or ask the user to run it through the shell tool, which asks first."
    )


def _split_options(sub: str, spec: Spec, rest: list[str]) -> tuple[list[str], list[str]]:
    """Check every option against `spec`; return (positional args, pathspecs after --)."""
    positional: list[str] = []
    index = 0
    while index < len(rest):
        arg = rest[index]
        index += 1
        if arg == "--":
            return positional, rest[index:]
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        if sub in ("log", "show") and _NUMBER.match(arg):
            continue
        if arg.startswith("--"):
            name, has_value, _ = arg.partition("=")
            kind = spec.get(name)
            if kind is None and name.startswith("--no-") and spec.get("--" + name[5:]) == FLAG:
                kind = FLAG
            if kind is None or (kind == FLAG and has_value):
                raise _refuse(sub, arg)
            if kind == VALUE and not has_value:
                if index >= len(rest):
                    raise ToolError(f"git {sub}: {name} needs a value")
                index += 1
            continue
        # short options: `-x`, `-xVALUE`, `-x VALUE`, or a cluster of flags (`-sb`)
        kind = spec.get(arg[:2])
        if kind is None:
            raise _refuse(sub, arg)
        if kind == FLAG and len(arg) > 2:
            if all(spec.get(f"-{ch}") == FLAG for ch in arg[1:]) or arg in spec:
                continue
            raise _refuse(sub, arg)
        if kind == VALUE and len(arg) == 2:
            if index >= len(rest):
                raise ToolError(f"git {sub}: {arg} needs a value")
            index += 1
    return positional, []


def _might_be_a_file(root: Path, arg: str) -> bool:
    if arg.startswith(("/", "~")) or ".." in arg.replace("\\", "/").split("/"):
        return True
    return os.path.lexists(os.path.join(root, arg))


def check_arguments(sub: str, rest: list[str], root: Path) -> None:
    """Raise ToolError for any argument the git tool does not pass on."""
    if any("\x00" in arg for arg in rest):
        raise ToolError(f"git {sub}: an argument contains a NUL character")
    if sub == "stash":
        action = rest[0] if rest and not rest[0].startswith("-") else "push"
        if action not in _STASH:
            raise ToolError(
                f"git stash {action} is refused: it can lose stashed work. "
                f"Supported: stash {', '.join(STASH_ACTIONS)}."
            )
        spec = _STASH[action]
        body = rest[1:] if rest and rest[0] == action else rest
        label = f"stash {action}"
    else:
        spec = SPECS[sub]
        body = rest
        label = sub
    positional, pathspecs = _split_options(label, spec, body)
    if sub == "branch" and positional:
        listing = {"--list", "-l", "--contains", "--merged", "--no-merged", "--points-at"}
        if not any(a.split("=")[0] in listing for a in body):
            raise ToolError(_BRANCH_ONLY_LISTS)
    for arg in positional + pathspecs:
        if arg in pathspecs or _might_be_a_file(root, arg):
            confine(root, arg)  # raises for paths outside the project (symlinks too)
    if sub == "commit" and not _has_message(body):
        raise ToolError(
            'git commit needs a message: {"subcommand": "commit", '
            '"args": ["-m", "What changed and why"]}'
        )


def _has_message(args: list[str]) -> bool:
    if "--amend" in args and "--no-edit" in args:
        return True
    return any(
        a in ("-m", "--message", "--fixup", "--squash")
        or a.startswith(("--message=", "--fixup=", "--squash="))
        or (a.startswith("-m") and len(a) > 2)
        for a in args
    )
