"""Which MCP servers a session may start: `[mcp.servers.NAME]` in the config files, a
project's `.mcp.json` (`{"mcpServers": {...}}`, the format other tools use), and servers a
face adds for one session (ACP's `session/new` passes `mcpServers`).

Servers a *project* defines (its `.loom.toml` or `.mcp.json`) start programs chosen by
whoever wrote the repository, so they run only once the person approved them
(`loom mcp approve NAME`); the approval is bound to a fingerprint of the definition, so a
changed command needs a new approval.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from loom.config import PROJECT_CONFIG_NAME, LoomConfig, McpServerSettings

MCP_JSON_NAME = ".mcp.json"
Origin = Literal["config", "project", "session"]


@dataclass(frozen=True)
class ServerSpec:
    """One MCP server as Loom will start it. `problem` is set when the entry cannot work
    (it is reported as that server's status; the others still start)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    enabled: bool = True
    timeout: float = 60.0
    origin: Origin = "config"
    source: str = ""  # the file it came from, for messages
    problem: str | None = None

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def needs_approval(self) -> bool:
        return self.origin == "project"

    def describe(self) -> str:
        """What it runs, for a person deciding whether to approve it."""
        if self.url:
            return self.url
        return " ".join([self.command or "?", *self.args])

    def fingerprint(self) -> str:
        """A hash of what the server runs (never stored in the clear: env may hold keys)."""
        payload = json.dumps(
            [self.command, list(self.args), self.env, self.cwd, self.url, self.headers],
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()


def spec_from_settings(
    name: str, settings: McpServerSettings, *, origin: Origin = "config", source: str = ""
) -> ServerSpec:
    spec = ServerSpec(
        name=name,
        command=_expand(settings.command),
        args=tuple(_expand(arg) for arg in settings.args),
        env={key: _expand(value) for key, value in settings.env.items()},
        cwd=_expand(settings.cwd),
        url=_expand(settings.url),
        headers={key: _expand(value) for key, value in settings.headers.items()},
        enabled=settings.enabled,
        timeout=settings.timeout,
        origin=origin,
        source=source,
    )
    return _checked(spec)


def _checked(spec: ServerSpec) -> ServerSpec:
    where = f" in {spec.source}" if spec.source else ""
    problem = None
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", spec.name):
        problem = f"the name {spec.name!r}{where} may hold only letters, digits, '_', '-', '.'"
    elif spec.command and spec.url:
        problem = f"it has both command and url{where}; keep one (command: stdio, url: HTTP)"
    elif not spec.command and not spec.url:
        problem = (
            f"it has neither command nor url{where}; set `command` (and `args`) to start a "
            "stdio server, or `url` for a streamable-HTTP one"
        )
    elif spec.url and not spec.url.startswith(("http://", "https://")):
        problem = f"url {spec.url!r}{where} must start with http:// or https://"
    if problem is None:
        return spec
    return ServerSpec(**{**spec.__dict__, "problem": problem})


def load_server_specs(config: LoomConfig) -> list[ServerSpec]:
    """Every configured server, sorted by name: config files first, then `.mcp.json`
    entries whose names the config files do not already use."""
    project_names, project_file = _project_config_names(config)
    user_files = [str(p) for p in config.sources if p.name != PROJECT_CONFIG_NAME]
    specs: dict[str, ServerSpec] = {}
    for name, settings in config.mcp.servers.items():
        origin: Origin = "project" if name in project_names else "config"
        source = str(project_file) if origin == "project" else (user_files or ["config"])[0]
        specs[name] = spec_from_settings(name, settings, origin=origin, source=source)
    for spec in read_mcp_json(config.project_root):
        specs.setdefault(spec.name, spec)
    return [specs[name] for name in sorted(specs)]


def _project_config_names(config: LoomConfig) -> tuple[set[str], Path | None]:
    """Server names the project's `.loom.toml` defines (they need approval)."""
    for path in config.sources:
        if path.name != PROJECT_CONFIG_NAME:
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return set(), path  # load_config already reported the file
        servers = data.get("mcp", {}).get("servers", {})
        return (set(servers) if isinstance(servers, dict) else set()), path
    return set(), None


def read_mcp_json(project_root: Path) -> list[ServerSpec]:
    """The servers of `<project>/.mcp.json`. A broken file yields one spec that carries the
    problem, so it is reported like any other failing server."""
    path = project_root / MCP_JSON_NAME
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return [_broken_file(path, f"cannot read it ({exc}); fix the JSON or remove the file")]
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return [_broken_file(path, 'expected {"mcpServers": {"NAME": {...}}}')]
    specs = []
    for name, entry in servers.items():
        specs.append(_from_json_entry(str(name), entry, str(path)))
    return specs


def _broken_file(path: Path, why: str) -> ServerSpec:
    return ServerSpec(
        name=MCP_JSON_NAME, origin="project", source=str(path), problem=f"{path}: {why}"
    )


def _from_json_entry(name: str, entry: Any, source: str) -> ServerSpec:
    if not isinstance(entry, dict):
        return ServerSpec(
            name=name,
            origin="project",
            source=source,
            problem=f"its entry in {source} is not an object",
        )
    try:
        settings = McpServerSettings(
            command=entry.get("command"),
            args=list(entry.get("args") or []),
            env=dict(entry.get("env") or {}),
            cwd=entry.get("cwd"),
            url=entry.get("url"),
            headers=dict(entry.get("headers") or {}),
            enabled=not entry.get("disabled", False),
            timeout=entry.get("timeout", 60.0),
        )
    except (ValueError, TypeError, AttributeError) as exc:
        return ServerSpec(
            name=name, origin="project", source=source, problem=f"bad entry in {source}: {exc}"
        )
    return spec_from_settings(name, settings, origin="project", source=source)


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def _expand(value: Any) -> Any:
    """`${VAR}` and `${VAR:-default}` from the environment (as `.mcp.json` files use;
    config files too, so a token need not be written into them)."""
    if not isinstance(value, str):
        return value
    return _VAR.sub(lambda m: os.environ.get(m.group(1)) or (m.group(2) or ""), value)


def session_specs(entries: list[Any]) -> list[ServerSpec]:
    """Servers a face passes for one session (ACP `mcpServers`: name, command, args,
    env as [{name, value}] or a dict, or url + headers). The person's client chose them,
    so they need no approval. A malformed entry becomes a spec carrying its problem."""
    specs = []
    for number, entry in enumerate(entries, 1):
        name = str(entry.get("name", "")) if isinstance(entry, dict) else f"#{number}"
        try:
            settings = McpServerSettings(
                command=entry.get("command"),
                args=list(entry.get("args") or []),
                env=_pairs(entry.get("env")),
                cwd=entry.get("cwd"),
                url=entry.get("url"),
                headers=_pairs(entry.get("headers")),
                timeout=entry.get("timeout", 60.0),
            )
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            why = " ".join(str(exc).split())[:300]
            problem = f"the session's MCP server entry {name!r} is malformed ({why})"
            specs.append(ServerSpec(name=name or f"#{number}", origin="session", problem=problem))
            continue
        specs.append(spec_from_settings(name, settings, origin="session", source="this session"))
    return specs


def _pairs(value: Any) -> dict[str, str]:
    """A dict, or ACP's list of {name, value}."""
    if isinstance(value, list):
        return {item["name"]: item["value"] for item in value}
    return dict(value or {})
