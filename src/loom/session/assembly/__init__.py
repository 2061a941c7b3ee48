"""What the one assembly path plugs into a session, from configuration and plugins:
providers, the tool set, the permission policy, the sandbox, MCP servers, the decision
graph hook. Built on loom.session.runtime; used by loom.session.workspace.workspace.
Importing this package imports nothing.
"""
