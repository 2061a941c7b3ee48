"""`loom list` and `loom search`, answered from the SQLite index with the stdlib only
(and a plain `loom run -p TEXT`, read by loom.cli.run.fast).

`__main__` calls `try_fast_path` before Typer, pydantic or any SDK is imported (Typer
alone costs ~120 ms). The Typer commands of the same name call `run_list` and
`run_search` below, so there is one implementation; the fast path only skips the
framework. Anything unusual (`--help`, `--remote`, an unknown option) returns None and
the full Typer app handles it.
"""

from __future__ import annotations

import os
import sys

from loom.core.text import json_visible, visible

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import TextIO


def try_fast_path(args: list[str]) -> int | None:
    if args and args[0] == "run":
        from loom.cli.run.fast import try_fast_run

        return try_fast_run(args[1:])
    if args and args[0] in ("map", "index"):
        from loom.cli.repo_fast import try_fast_repo

        return try_fast_repo(args)
    if not args or args[0] not in ("list", "search"):
        return None
    parsed = _parse(args[1:], wants_query=args[0] == "search")
    if parsed is None:
        return None
    limit, as_json, words = parsed
    flags = {"--tree", "--all"} & set(words) if args[0] == "list" else set()
    words = [word for word in words if word not in flags]
    if args[0] == "list" and words:
        return None
    if args[0] == "search" and not words:
        return None  # let Typer explain the missing QUERY
    try:
        if args[0] == "list":
            return run_list(
                50 if limit is None else limit,
                as_json,
                tree="--tree" in flags,
                all_projects="--all" in flags,
            )
        return run_search(" ".join(words), 20 if limit is None else limit, as_json)
    except KeyboardInterrupt:
        # Everything indexed so far is committed; the next list carries on from there.
        sys.stderr.write("\nloom: interrupted; the index keeps what it has so far\n")
        return 130
    except BrokenPipeError:  # `loom list | head`: the reader left, which is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


# the options read here (tests/cli/test_fast_argv.py checks them against the Typer commands)
LIST_FLAGS = ("--json", "--tree", "--all")
SEARCH_FLAGS = ("--json",)
LIMIT_OPTIONS = ("--limit", "-n")


def _parse(rest: list[str], wants_query: bool) -> tuple[int | None, bool, list[str]] | None:
    limit: int | None = None
    as_json = False
    words: list[str] = []
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg == "--json":
            as_json = True
        elif arg in ("--tree", "--all") and not wants_query:
            words.append(arg)  # `loom list --tree --all`: taken out again by the caller
        elif arg in LIMIT_OPTIONS and i + 1 < len(rest) and rest[i + 1].isdigit():
            limit = int(rest[i + 1])
            i += 1
        elif arg.startswith("--limit=") and arg[8:].isdigit():
            limit = int(arg[8:])
        elif arg == "--":
            words.extend(rest[i + 1 :])
            break
        elif arg.startswith("-") or not wants_query:
            return None
        else:
            words.append(arg)
        i += 1
    return limit, as_json, words


# -- the commands (also called by the Typer commands) ------------------------------------


def run_list(
    limit: int = 50,
    as_json: bool = False,
    out: TextIO | None = None,
    *,
    tree: bool = False,
    all_projects: bool = False,
) -> int:
    """The current project's threads (every project's with `all_projects`). `tree`:
    sub-agents' threads under the thread that started them (the top level is `limit`
    threads; their families come whole)."""
    project = None if all_projects else current_project()
    counted: list[int] = []  # threads of other projects, counted with the same index

    def query(index):  # ThreadIndex -> list of rows
        if project is not None:
            counted[:] = [index.count_elsewhere(project)]
        if tree:
            from loom.session import family_rows

            return family_rows(index, limit, project=project)
        return index.list(limit, project=project)

    rows = _answer(query)
    out = out or _stdout()
    if as_json:
        import json

        out.write(json_visible(json.dumps(rows, indent=2, ensure_ascii=False)) + "\n")
        return 0
    if rows:
        out.write(format_table(rows))
    elsewhere = counted[0] if counted else 0
    if elsewhere:
        where = f"{len(rows)} here, " if rows else f"none in {visible(project or '')}; "
        sys.stderr.write(
            f"loom: {where}{elsewhere} in other projects; `loom list --all` lists every one\n"
        )
    elif not rows:
        out.write("No threads yet. Start one with `loom`.\n")
    return 0


def current_project() -> str:
    """The project root of the working folder, as threads record it."""
    from pathlib import Path

    from loom.paths import walk_to_project

    return str(walk_to_project(Path.cwd().resolve())[0])


def run_search(
    query: str, limit: int = 20, as_json: bool = False, out: TextIO | None = None
) -> int:
    from loom.session import has_search_words

    out = out or _stdout()
    if not has_search_words(query):
        from loom.cli.errors import error_line

        said = "the query has no words to search for; try a word or an id"
        sys.stderr.write(error_line(said) + "\n")
        return 1
    hits = _answer(lambda index: index.search(query, limit), search=True)
    if as_json:
        import json

        data = [{**row, "snippet": snippet, "rank": rank} for row, snippet, rank in hits]
        out.write(json_visible(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")
        return 0
    if not hits:
        out.write(f"No threads match '{visible(query)}'. Try fewer or shorter words.\n")
        return 0
    from loom.core.clock import humanize_age

    tty = out.isatty() and not os.environ.get("NO_COLOR")
    from loom.core.project_names import project_labels

    projects = project_labels([row["workspace_root"] for row, _, _ in hits])
    for row, snippet, _rank in hits:
        project = _cut(projects.get(row["workspace_root"], "-"), 80)
        branch = _cut(row["git_branch"] or "", 60)
        age = humanize_age(row["last_activity_at"])
        where = ", ".join(p for p in (project, branch, age) if p and p != "-")
        out.write(f"{_bold(row['id'], tty)}  {_cut(row['title'], 200)}  ({where})\n")
        if snippet:
            out.write(f"    {_highlight(_cut(snippet, 2000), tty)}\n")
    return 0


def _answer(query, search: bool = False):  # (ThreadIndex -> T) -> T
    from loom.session import answer_from_index

    shown = []  # (what, display): made only when there is much to index, one at a time

    def progress_of(what: str):  # -> (done, total) -> None
        def progress(done: int, total: int) -> None:
            if not shown or shown[-1][0] != what:
                from loom.cli.index_progress import IndexProgress

                if shown:
                    shown[-1][1].close()
                shown.append((what, IndexProgress(what=what)))
            shown[-1][1](done, total)

        return progress

    try:
        return answer_from_index(
            query,
            _warn,
            progress_of("thread files"),
            search_progress=progress_of("messages for search"),
            search=search,
        )
    finally:
        if shown:
            shown[-1][1].close()


def _warn(line: str) -> None:
    sys.stderr.write(f"loom: {visible(line)}\n")
    sys.stderr.flush()


# -- plain-text rendering ----------------------------------------------------------------


def format_table(rows: list) -> str:
    from loom.core.clock import humanize_age
    from loom.core.project_names import project_labels

    width = _terminal_width()
    projects = project_labels([r.get("workspace_root") for r in rows])
    cells = [
        (
            r["id"],
            r["title"],
            _cut_start(projects.get(r.get("workspace_root"), "-"), 32),
            r["git_branch"] or "-",
            str(r["message_count"]),
            humanize_age(r["last_activity_at"]),
        )
        for r in rows
    ]
    # `loom list --tree`: a sub-agent's title is indented under its parent's
    indents = ["", *("  " * (r["depth"] - 1) + "↳ " if r.get("depth") else "" for r in rows)]
    header = ("ID", "TITLE", "PROJECT", "BRANCH", "MSGS", "LAST ACTIVITY")
    project_w = max(len(header[2]), *(len(c[2]) for c in cells))
    branch_w = min(24, max(len(header[3]), *(len(c[3]) for c in cells)))
    msgs_w = max(len(header[4]), *(len(c[4]) for c in cells))
    age_w = max(len(header[5]), *(len(c[5]) for c in cells))
    fixed = 38 + project_w + branch_w + msgs_w + age_w + 10
    title_w = max(12, min(60, width - fixed))
    lines = []
    for indent, (ident, title, project, branch, msgs, age) in zip(
        indents, (header, *cells), strict=True
    ):
        shown = indent + _cut(title, max(4, title_w - len(indent)))
        lines.append(
            f"{ident:<38}  {shown:<{title_w}}  {project:<{project_w}}"
            f"  {_cut(branch, branch_w):<{branch_w}}  {msgs:>{msgs_w}}  {age}"
        )
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _terminal_width() -> int:
    """Like shutil.get_terminal_size (COLUMNS first), without importing shutil."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size((sys.__stdout__ or _stdout()).fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 120


def _cut(text: str, width: int) -> str:
    """One line of at most `width` characters, shown as text (a title, a branch and a
    snippet come from a model, a repository or a thread: escapes are shown, not run)."""
    text = visible(" ".join(text.split()))
    return text if len(text) <= width else text[: width - 1] + "…"


def _cut_start(text: str, width: int) -> str:
    """As _cut, keeping the end (a path's last folders tell projects apart)."""
    text = visible(" ".join(text.split()))
    return text if len(text) <= width else "…" + text[len(text) - width + 1 :]


def _bold(text: str, tty: bool) -> str:
    return f"\x1b[1m{text}\x1b[0m" if tty else text


def _highlight(snippet: str, tty: bool) -> str:
    """The snippet's **marked** words in bold yellow on a terminal; plain when piped."""
    import re

    return re.sub(r"\*\*(.+?)\*\*", "\x1b[1;33m\\1\x1b[0m" if tty else "\\1", snippet)


def _stdout() -> TextIO:
    """sys.stdout; None only without a console (pythonw), where nothing is shown."""
    return sys.stdout or open(os.devnull, "w")
