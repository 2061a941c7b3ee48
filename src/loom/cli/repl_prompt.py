"""The REPL's input line: prompt_toolkit with history, Tab completion of slash commands,
models and paths, and a bottom toolbar (model, thread, tokens, cost)."""

from __future__ import annotations

from typing import Any


def make_prompt(repl: Any) -> Any:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    from loom.cli.paste_keys import paste_bindings
    from loom.cli.repl_complete import ReplCompleter
    from loom.paths import LoomPaths

    history: Any
    try:
        history_file = LoomPaths.from_env().state / "repl_history"
        history_file.parent.mkdir(parents=True, exist_ok=True)
        history = FileHistory(str(history_file))
    except OSError:
        history = InMemoryHistory()
    return PromptSession(
        message=lambda: f"{repl.mode()} › ",
        history=history,
        bottom_toolbar=repl.status.toolbar,
        completer=ReplCompleter(repl),
        complete_while_typing=False,  # Tab completes; typing is never interrupted
        reserve_space_for_menu=4,
        key_bindings=paste_bindings(),  # a paste typed key by key: one insert per run
    )


def apply_config(prompt: Any, config: Any) -> None:
    """Settings known only once the configuration is read (after the prompt is up)."""
    from prompt_toolkit.enums import EditingMode

    mode = EditingMode.VI if config.ui.editing_mode == "vi" else EditingMode.EMACS
    prompt.editing_mode = mode
    prompt.app.editing_mode = mode
    prompt.app.invalidate()
