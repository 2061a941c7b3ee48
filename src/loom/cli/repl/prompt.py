"""The REPL's input line: prompt_toolkit with history, Tab completion of slash commands,
models and paths, a bottom toolbar (model, thread, tokens, cost), and Shift-Tab to cycle
the permission mode (as in Claude Code), Ctrl-O to unfold the model's thinking."""

from __future__ import annotations

from typing import Any


def make_prompt(repl: Any) -> Any:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    from loom.cli.repl.complete import ReplCompleter
    from loom.cli.repl.paste_keys import paste_bindings
    from loom.paths import LoomPaths

    history: Any
    try:
        history_file = LoomPaths.from_env().state / "repl_history"
        history_file.parent.mkdir(parents=True, exist_ok=True)
        history = FileHistory(str(history_file))
    except OSError:
        history = InMemoryHistory()
    from prompt_toolkit.key_binding import merge_key_bindings

    return PromptSession(
        message=lambda: f"{repl.prompt_label()} › ",
        history=history,
        bottom_toolbar=repl.status.toolbar,
        completer=ReplCompleter(repl),
        complete_while_typing=False,  # Tab completes; typing is never interrupted
        reserve_space_for_menu=4,
        # a paste typed key by key: one insert per run; Shift-Tab cycles the mode
        key_bindings=merge_key_bindings([paste_bindings(), _mode_key(repl)]),
    )


def _mode_key(repl: Any) -> Any:
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys

    bindings = KeyBindings()

    @bindings.add(Keys.BackTab)  # Shift-Tab, as terminals send it (ESC [ Z)
    def _cycle(event: Any) -> None:
        repl.cycle_permission_mode()
        event.app.invalidate()

    @bindings.add("c-o")  # Ctrl-O unfolds (or folds) the thinking, as /thinking does
    def _thinking(_event: Any) -> None:
        if repl.commands is not None:
            repl.print_above_prompt(repl.commands.toggle_thinking)

    return bindings


def apply_config(prompt: Any, config: Any) -> None:
    """Settings known only once the configuration is read (after the prompt is up)."""
    from prompt_toolkit.enums import EditingMode

    mode = EditingMode.VI if config.ui.editing_mode == "vi" else EditingMode.EMACS
    prompt.editing_mode = mode
    prompt.app.editing_mode = mode
    prompt.app.invalidate()
