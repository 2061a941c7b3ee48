"""Language servers: an LSP client over stdio and a per-project supervisor.

A session's `provide()` gives its lsp_* tools a supervisor of their own, whose servers
start as `ServerLaunch` (lsp/launch.py) says: in the session's sandbox, with an
allow-listed environment, and with the project's interpreter only once it is trusted.
They stop with the session (`await supervisor.aclose()`); `supervisor_for` is a shared
one per project per event loop, for callers outside a session.
"""
