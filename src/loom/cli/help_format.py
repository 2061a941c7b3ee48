"""`--help` that reads well at 80 columns: no `<bool>` / `<str>` / `list[str]` type tags (a
flag shows nothing, a value a word such as TEXT or N), option and command names never cut
to `--include-partial-mess…` (their column keeps its width; the help text wraps instead),
and a docstring's paragraphs flow (no word left alone on a line by a source line break).

Typer draws help with rich; these adjust its rendering once, when the app is built.
"""

from __future__ import annotations

from typing import Any

# Typer's type tags, as words a person reads in a usage line
_WORDS = {"str": "TEXT", "int": "N", "int range": "N", "float": "NUMBER",
          "float range": "NUMBER", "path": "PATH", "bool": ""}  # fmt: skip
_applied: list[bool] = []


def value_word(param: Any, ctx: Any) -> str | None:
    """What a help line shows after an option's name: nothing for a flag."""
    from typer.core import _TyperParameter

    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return None
    if param.metavar is not None:
        return str(param.metavar)
    tag = _TyperParameter.display_type(param, ctx).strip("<>")
    if tag.startswith("list[") and tag.endswith("]"):  # a repeatable option, a list argument
        tag = tag[5:-1].lower()
    word = _WORDS.get(tag, tag if "|" in tag else tag.upper())
    if word and param.nargs != 1:
        word += "..."
    return word or None


def _keeps_breaks(paragraph: str) -> bool:
    """A paragraph laid out by line (a list, an indented example, a `\\b` block)."""
    lines = paragraph.split("\n")
    return paragraph.startswith("\b") or any(
        line[:1].isspace() or line.lstrip().startswith(("- ", "* ", "• ")) for line in lines
    )


def reflowed(paragraphs: list[str], markup_mode: Any = None) -> str:
    """A help text's later paragraphs as flowing text: typer's rich mode keeps every line
    break of the docstring, so a source line wider than the terminal left a word or two
    on a line of its own. Lists and indented blocks keep their lines."""
    return "\n\n".join(p if _keeps_breaks(p) else " ".join(p.split()) for p in paragraphs)


def _no_such_option(error: Any) -> str:
    """`No such option: --modle (did you mean --model?). loom resume takes: -p/--prompt,
    -m/--model, ...`: every option the command has, not only the close matches."""
    close = sorted(error.possibilities or ())
    said = error.message + (f" (did you mean {', '.join(close)}?)" if close else "")
    ctx = error.ctx
    if ctx is None:
        return said
    names = [
        "/".join(sorted([*param.opts, *param.secondary_opts], key=len))
        for param in ctx.command.get_params(ctx)
        if param.param_type_name == "option" and param.opts
    ]
    return f"{said}. `{ctx.command_path}` takes: {', '.join(names)}"


def apply_to_errors() -> None:
    """Only the error message's adjustment: what a command that prints no help needs
    (the help ones load typer's rich help module and rich's tables, ~0.15 s of start-up)."""
    from typer import core
    from typer._click import exceptions

    exceptions.NoSuchOption.format_message = _no_such_option  # type: ignore[method-assign]
    core.TyperArgument._usage_display_name = _usage_name  # type: ignore[method-assign]
    core.TyperArgument.get_error_hint = _argument_hint  # type: ignore[method-assign]
    exceptions.ClickException.show = _show_error  # type: ignore[method-assign]
    exceptions.UsageError.show = _show_error  # type: ignore[method-assign]
    if not getattr(core._main, "plain_errors", False):
        core._main = _plain_errors(core._main)


def _argument_hint(param: Any) -> str:
    """An argument named in an error as the usage line names it (`'REF'`)."""
    return repr(_usage_name(param).strip("[]"))


def _plain_errors(main: Any) -> Any:
    """Typer's command runner, its errors shown by `_show_error` (not in a rich panel)."""

    def run(*args: Any, **kwargs: Any) -> Any:
        return main(*args, **{**kwargs, "rich_markup_mode": None})  # only errors read it

    run.plain_errors = True  # type: ignore[attr-defined]
    return run


def _show_error(error: Any, file: Any = None) -> None:
    """A usage error as every Loom error is shown: the usage line, where help is, and one
    `loom: error: ...` line (exit 2 still says it was the command line's fault)."""
    import sys

    from loom.cli.errors import error_line

    ctx = getattr(error, "ctx", None)
    lines = []
    if ctx is not None:
        lines.append(ctx.get_usage())
        if ctx.command.get_help_option(ctx) is not None:
            lines.append(f"Try '{ctx.command_path} {ctx.help_option_names[0]}' for help.")
    lines.append(error_line(error.format_message()))
    (file or sys.stderr).write("\n".join(lines) + "\n")


def _usage_name(param: Any) -> str:
    """An argument in a usage line as a person reads one: `REF`, `[REF]` when it may be
    left out (typer writes a required one as `{ref}`)."""
    name = str(param.metavar or param.name or "").upper()
    name = name if param.required else f"[{name}]"
    return name + ("..." if param.nargs != 1 else "")


def apply() -> None:
    """Install the adjustments (once per process)."""
    if _applied:
        return
    _applied.append(True)
    apply_to_errors()
    from rich.table import Table
    from typer import core, rich_utils

    class NamesKeptTable(Table):
        """A help table whose name columns (`--option`, `-o`, command names) are never
        cut: the text column wraps instead."""

        def __rich_console__(self, console: Any, options: Any) -> Any:
            for column in self.columns:
                cells = [str(cell) for cell in column.cells]
                if cells and all(c == "" or c.startswith("-") for c in cells):
                    column.no_wrap = True
            if self.columns and not self.columns[0].no_wrap:  # a command panel's names
                names = [str(cell) for cell in self.columns[0].cells]
                if names and all(" " not in n for n in names):
                    self.columns[0].no_wrap = True
            return super().__rich_console__(console, options)

    core.TyperOption.display_type_rich = value_word  # type: ignore[method-assign]
    core._TyperParameter.display_type_rich = value_word  # type: ignore[method-assign]
    rich_utils.Table = NamesKeptTable  # type: ignore[misc]
    rich_utils._fix_linebreaks = reflowed  # type: ignore[attr-defined]
