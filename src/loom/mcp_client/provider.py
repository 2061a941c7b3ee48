"""How a session gets its MCP tools: one call at session assembly.

`start_mcp` builds the hub for the configured servers (plus any the face passes for this
session), registers their tools into the session's registry as each server becomes ready,
and returns the hub so the session can wait for it and stop it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

from loom.config import LoomConfig
from loom.mcp_client.approvals import ApprovalStore
from loom.mcp_client.hub import McpHub
from loom.mcp_client.specs import ServerSpec, load_server_specs, session_specs
from loom.paths import LoomPaths
from loom.tools.base import ToolRegistry


def _stderr_notice(line: str) -> None:
    sys.stderr.write(f"loom: {line}\n")
    sys.stderr.flush()


def start_mcp(
    config: LoomConfig,
    registry: ToolRegistry,
    *,
    paths: LoomPaths,
    session_servers: Iterable[dict[str, Any] | ServerSpec] = (),
    on_notice: Callable[[str], None] | None = None,
    face_asks_approval: bool = False,
) -> McpHub | None:
    """Start this session's MCP servers in the background; None when there are none.
    `face_asks_approval`: the face asks about unapproved project servers itself, so
    they get no notice line."""
    extra = [s for s in session_servers if isinstance(s, ServerSpec)]
    extra += session_specs([s for s in session_servers if not isinstance(s, ServerSpec)])
    specs = {spec.name: spec for spec in load_server_specs(config)}
    specs.update({spec.name: spec for spec in extra})  # the session's own win
    if not specs:
        return None
    hub = McpHub(
        specs.values(),
        registry,
        settings=config.mcp,
        log_dir=paths.state / "mcp",
        approvals=ApprovalStore(paths.database, config.project_root),
        on_notice=on_notice or _stderr_notice,
        pass_env=config.shell.pass_env,
        face_asks_approval=face_asks_approval,
        project_root=config.project_root,
    )
    hub.start()
    return hub
