"""`loom config`: the effective configuration, where each layer came from, and problems."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import typer

from loom.cli._output import error_line, say, warn


def register(app: typer.Typer) -> None:
    app.command("config", help="Show the effective configuration and where it came from.")(
        config_command
    )


def config_command(
    as_json: bool = typer.Option(False, "--json", help="Print it as one JSON object."),
) -> None:
    from loom.config import ENVIRONMENT_VARIABLES, ConfigError, find_project, load_config
    from loom.paths import LoomPaths

    cwd = Path.cwd()
    try:
        config = load_config(cwd)
    except ConfigError as exc:
        typer.echo(error_line(exc), err=True)
        raise typer.Exit(1) from exc
    for warning in config.warnings:
        warn(f"loom: warning: {warning}")
    data = mask_secrets(config.model_dump(mode="json", by_alias=True))
    user_file = LoomPaths.from_env().user_config_file
    project_file = find_project(cwd.resolve())[1]
    environment = [name for name in ENVIRONMENT_VARIABLES if os.environ.get(name)]
    trust = config.trust
    ignored = trust.ignored() if trust is not None else []
    reason = "ignored: project not trusted"
    if as_json:
        sources = {
            "user_file": str(user_file),
            "project_file": str(project_file) if project_file else None,
            "loaded": [str(path) for path in config.sources],
            "environment": environment,
        }
        payload = {
            "project_root": str(config.project_root),
            "sources": sources,
            "config": data,
            "trust": trust.state if trust is not None else "none",
            "ignored": [
                {"key": i.key, "source": i.source, "shown": i.lines(), "reason": reason}
                for i in ignored
            ],
        }
        typer.echo(json.dumps(payload, indent=2))
        return
    loaded = set(config.sources)
    say(f"# project root: {config.project_root}")
    say(f"# user file:    {user_file}{'' if user_file in loaded else ' (none)'}")
    say(f"# project file: {project_file or '(none; .loom.toml up to the git root)'}")
    say(f"# environment:  {', '.join(environment) or '(none)'}")
    say("# later layers win: defaults < user < project < environment < flags\n")
    say(to_toml(data))
    if ignored:
        say(f"\n# {reason} (`loom trust` shows and trusts them):")
        for item in ignored:
            shown = item.lines()
            say(f"#   {shown[0]}   [{item.source}]  ({reason})")
            for line in shown[1:]:
                say(f"#   {line}")


def mask_secrets(data: Any) -> Any:
    """api_key values, MCP servers' headers and secret env values shown as set/unset,
    never printed."""
    if isinstance(data, dict):
        return {key: _masked(key, value) for key, value in data.items()}
    return data


def _masked(key: str, value: Any) -> Any:
    from loom.core.secrets import is_secret_variable

    if key == "api_key":
        return "<set>" if value else None
    if key == "headers" and isinstance(value, dict):  # e.g. Authorization: Bearer ...
        return {name: "<set>" for name in value}
    if key == "env" and isinstance(value, dict):
        return {n: "<set>" if is_secret_variable(n, str(v)) else v for n, v in value.items()}
    return mask_secrets(value)


def to_toml(data: dict[str, Any], prefix: str = "") -> str:
    """Just enough TOML for a config: scalars, lists, nested tables; unset keys as comments."""
    lines: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append((f"{prefix}{_key(key)}", value))
        elif value is None:
            lines.append(f"# {_key(key)} (unset)")
        else:
            lines.append(f"{_key(key)} = {json.dumps(value)}")
    blocks = []
    if lines or (prefix and not tables):
        header = [f"[{prefix.rstrip('.')}]"] if prefix else []
        blocks.append("\n".join(header + lines))
    blocks += [to_toml(table, f"{name}.") for name, table in tables]
    return "\n\n".join(block for block in blocks if block.strip())


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)
