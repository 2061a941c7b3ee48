"""Which MCP servers a session may start: `[mcp.servers.NAME]` in the config files, a
project's `.mcp.json` (`{"mcpServers": {...}}`, the format other tools use), and servers a
face adds for one session (ACP's `session/new` passes `mcpServers`).

Servers a *project* defines (its `.loom.toml` or `.mcp.json`) start programs chosen by
whoever wrote the repository, so they run only once the person trusted the project as it
is (`loom trust`, which shows them in full) or approved that one server
(`loom mcp approve NAME`); the approval is bound to a fingerprint of the definition, so a
changed command needs a new approval. `.mcp.json` is read confined to the project.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from loom.config import LoomConfig, McpServerSettings
from loom.config_keys import mcp_server_lines, visible
from loom.project_files import OutsideProject, read_project_text

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
    trusted: bool = False  # a project's server in a project the person trusts as it is
    # what it runs as written (before `${VAR}` expansion), secrets masked: for a person
    shown: tuple[str, ...] = ()

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def needs_approval(self) -> bool:
        return self.origin == "project" and not self.trusted

    def describe(self) -> str:
        """What it runs, in one line (the command line or the URL)."""
        if self.url:
            return visible(self.url)
        return visible(" ".join([self.command or "?", *self.args]))

    def details(self) -> list[str]:
        """Everything approving it lets it do: command and args, cwd, env (values masked
        when secret-like), url, headers (values masked; `${VAR}` named as such)."""
        return list(self.shown) or [self.describe()]

    def fingerprint(self) -> str:
        """A hash of what the server runs (never stored in the clear: env may hold keys)."""
        payload = json.dumps(
            [self.command, list(self.args), self.env, self.cwd, self.url, self.headers],
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()


def spec_from_settings(
    name: str,
    settings: McpServerSettings,
    *,
    origin: Origin = "config",
    source: str = "",
    trusted: bool = False,
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
        trusted=trusted and origin == "project",
        shown=tuple(mcp_server_lines(settings.model_dump())),
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
    return replace(spec, problem=problem)


def load_server_specs(config: LoomConfig) -> list[ServerSpec]:
    """Every configured server, sorted by name: config files first, then `.mcp.json`
    entries whose names the config files do not already use. A project's servers are
    listed whether or not the project is trusted (untrusted, each needs approval)."""
    trust = config.trust
    trusted = bool(trust is not None and trust.applies)
    held = _project_servers(config)
    user_files = [str(p) for p in config.sources if p.name != ".loom.toml"]
    specs: dict[str, ServerSpec] = {}
    for name, settings in config.mcp.servers.items():
        if name in held and trusted:
            continue  # the project's own definition, added below
        source = (user_files or ["config"])[0]
        specs[name] = spec_from_settings(name, settings, source=source)
    for name, (source, raw) in held.items():
        if name in specs:
            continue  # the person's own definition wins over an untrusted project's
        specs[name] = _from_entry(name, raw, source, trusted)
    for spec in read_mcp_json(config.project_root, trusted=_trusted_mcp_json(config)):
        specs.setdefault(spec.name, spec)
    return [specs[name] for name in sorted(specs)]


def _trusted_mcp_json(config: LoomConfig) -> dict[str, Any]:
    """name -> entry of the `.mcp.json` servers the person trusted: as the file was when
    the configuration was read. A server added or changed since (a long-lived face, a
    `git pull` during a session) is not among them and needs approval."""
    trust = config.trust
    if trust is None or not trust.applies:
        return {}
    return {
        item.key.removeprefix("mcpServers."): item.value
        for item in trust.items
        if item.source == MCP_JSON_NAME and item.key.startswith("mcpServers.")
    }


def _project_servers(config: LoomConfig) -> dict[str, tuple[str, Any]]:
    """name -> (file, definition as written) of each server the project's `.loom.toml`
    defines (config.trust holds them, applied or not)."""
    trust = config.trust
    if trust is None:
        return {}
    found = {}
    for item in trust.items:
        if item.key.startswith("mcp.servers."):
            found[item.key.removeprefix("mcp.servers.")] = (
                str(config.project_root / item.source),
                item.value,
            )
    return found


def read_mcp_json(project_root: Path, *, trusted: dict[str, Any] | None = None) -> list[ServerSpec]:
    """The servers of `<project>/.mcp.json`. A broken file yields one spec that carries the
    problem, so it is reported like any other failing server; one that leads outside the
    project (a symlink) is not read at all. An entry equal to its `trusted` one needs
    no approval."""
    trusted = trusted or {}
    path = project_root / MCP_JSON_NAME
    try:
        text = read_project_text(project_root, MCP_JSON_NAME)
    except OutsideProject:
        return []  # load_config said so
    if text is None:
        return []
    try:
        data = json.loads(text)
    except ValueError as exc:
        return [_broken_file(path, f"cannot read it ({exc}); fix the JSON or remove the file")]
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return [_broken_file(path, 'expected {"mcpServers": {"NAME": {...}}}')]
    return [
        _from_entry(str(name), entry, str(path), name in trusted and trusted[name] == entry)
        for name, entry in servers.items()
    ]


def _broken_file(path: Path, why: str) -> ServerSpec:
    return ServerSpec(
        name=MCP_JSON_NAME, origin="project", source=str(path), problem=f"{path}: {why}"
    )


def _from_entry(name: str, entry: Any, source: str, trusted: bool) -> ServerSpec:
    """A project's server definition (a `.mcp.json` entry or a held `.loom.toml` table)."""
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
            enabled=not entry.get("disabled", False) and entry.get("enabled", True),
            timeout=entry.get("timeout", 60.0),
        )
    except (ValueError, TypeError, AttributeError) as exc:
        return ServerSpec(
            name=name, origin="project", source=source, problem=f"bad entry in {source}: {exc}"
        )
    return spec_from_settings(name, settings, origin="project", source=source, trusted=trusted)


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
