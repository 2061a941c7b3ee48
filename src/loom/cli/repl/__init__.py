"""The REPL: `loom`, `loom chat`, `loom -c`, `loom resume [ID]`.

- `main`: the entry points (a bare `loom` read without Typer, `start_chat`,
  `continue_thread`);
- `starter`: opening the session behind the prompt, so the prompt comes first;
- `loop`: the read-eval loop (`Repl`), turns, Ctrl-C and Esc;
- `prompt`, `complete`, `mentions`, `paste_keys`: the input line (history, Tab
  completion of commands, models, paths and @-mentions, a paste as one insert, keys);
- `status`: the spinner and the bottom toolbar;
- `commands`: the slash commands; `undo` (/undo, /rewind) and `init_file` (/init) are
  theirs.

Rendering a session's events is shared with `loom run`'s text output:
`loom.cli.chat_render`, `loom.cli.approve` (permission questions).
"""
