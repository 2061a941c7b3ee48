"""The four Loom roots as plain strings, without pathlib.

`loom.paths.LoomPaths.from_env` builds on this; the `loom list` / `loom search` fast
path uses it directly because importing pathlib costs ~8 ms of a ~30 ms command.
"""

from __future__ import annotations

import os

APP = "loom"


def _xdg(var: str, fallback: str) -> str:
    value = os.environ.get(var)
    if value and os.path.isabs(value):
        return os.path.join(value, APP)
    return os.path.join(os.path.expanduser("~"), fallback, APP)


def roots() -> tuple[str, str, str, str]:
    """(data, state, cache, config) from LOOM_HOME, else the XDG variables."""
    home = os.environ.get("LOOM_HOME")
    if home:
        root = os.path.expanduser(home)
        return tuple(os.path.join(root, d) for d in ("data", "state", "cache", "config"))  # type: ignore[return-value]
    return (
        _xdg("XDG_DATA_HOME", ".local/share"),
        _xdg("XDG_STATE_HOME", ".local/state"),
        _xdg("XDG_CACHE_HOME", ".cache"),
        _xdg("XDG_CONFIG_HOME", ".config"),
    )
