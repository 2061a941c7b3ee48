"""What faces call beside a running session: the approval view, undo and rewind, thread
and model look-ups, MCP server administration, usage figures, and `ToolAccess` (tools
without a model, for `loom mcp serve`). Faces reach these through `loom.session`'s
exports only. Importing this package imports nothing.
"""
