"""Language servers: an LSP client over stdio and a per-project supervisor.

The session owns one `LspSupervisor` per project (see `supervisor_for`) and stops it
with `await supervisor.aclose()` (or `await aclose_project(root)`).
"""
