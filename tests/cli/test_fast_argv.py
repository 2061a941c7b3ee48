"""The readers that answer a plain command line before Typer is imported (start-up time)
know only options the Typer commands declare, with the same kind (a flag or a value):
an option renamed or removed in one place and not the other fails here."""

from __future__ import annotations

from typing import Any

import pytest


def _options(name: str | None) -> tuple[set[str], set[str]]:
    """(options taking a value, flags) of `loom NAME`, or of plain `loom` for None."""
    from typer.main import get_command

    from loom.cli.app import _register, app

    _register(["loom.cli.run.command", "loom.cli.repo", "loom.cli.threads", "loom.cli.chat"])
    group: Any = get_command(app)
    command = group if name is None else group.commands[name]
    values: set[str] = set()
    flags: set[str] = set()
    for param in command.params:
        if getattr(param, "opts", None) and param.param_type_name == "option":
            (flags if param.is_flag else values).update(param.opts)
    return values, flags


def test_the_bare_repl_reader_knows_only_the_main_commands_options() -> None:
    from loom.cli.repl.main import BARE_FLAGS, BARE_VALUES

    values, flags = _options(None)
    assert set(BARE_FLAGS) <= flags, set(BARE_FLAGS) - flags
    assert set(BARE_VALUES) <= values, set(BARE_VALUES) - values


def test_the_map_and_index_readers_know_only_their_commands_options() -> None:
    from loom.cli.repo_fast import INDEX_OPTIONS, MAP_OPTIONS

    values, _ = _options("map")
    assert set(MAP_OPTIONS) == values
    values, _ = _options("index")
    assert set(INDEX_OPTIONS) <= values


@pytest.mark.parametrize(
    ("name", "flags_read"), [("list", "LIST_FLAGS"), ("search", "SEARCH_FLAGS")]
)
def test_the_list_and_search_readers_know_only_their_commands_options(
    name: str, flags_read: str
) -> None:
    from loom.cli import fast

    values, flags = _options(name)
    assert set(getattr(fast, flags_read)) <= flags
    assert set(fast.LIMIT_OPTIONS) <= values


def test_the_efforts_the_fast_readers_accept_are_the_catalogs() -> None:
    from loom.cli.repl.main import EFFORTS as repl_efforts
    from loom.cli.run.fast import EFFORTS as run_efforts
    from loom.llm.effort import EFFORTS

    assert repl_efforts == run_efforts == EFFORTS
