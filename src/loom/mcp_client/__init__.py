"""Loom as an MCP *client*: external servers' tools reach the agent as
`mcp__<server>__<tool>`, under the same permission policy as the built-in tools.

    hub = start_mcp(config, registry, paths=paths)          # background connections
    specs = load_server_specs(config)                       # [mcp.servers.*] + .mcp.json

The SDK (`mcp`) is imported only when a server actually starts.
"""

from loom.mcp_client.approvals import ApprovalStore
from loom.mcp_client.hub import McpHub, ServerStatus
from loom.mcp_client.provider import start_mcp
from loom.mcp_client.specs import ServerSpec, load_server_specs, read_mcp_json, session_specs

__all__ = [
    "ApprovalStore",
    "McpHub",
    "ServerSpec",
    "ServerStatus",
    "load_server_specs",
    "read_mcp_json",
    "session_specs",
    "start_mcp",
]
