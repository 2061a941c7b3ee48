"""One conversation, running: the Session and what it runs on (the model call, the tool
runner, the permission gate, the context window, compaction, the saver, the event bus,
architect mode, checkpoints and post-tool hooks).

Nothing here knows the Workspace, configuration files or plugins: what a session needs
is handed to it by loom.session.workspace (the one assembly path) through `Session`'s
arguments and `SessionOptions`. Importing this package imports nothing.
"""
