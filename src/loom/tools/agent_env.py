"""The environment commands the agent runs get: Loom's own and well-known credentials
removed, unless `[shell] pass_env` names them.

A model that can run `env` (or `git config --get`, or a script) would otherwise copy
every API key Loom was started with into the thread, the index, the sync server and
the next model request. The rules for what is a secret are `loom.core.secrets`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

from loom.core.secrets import is_secret_variable

# Loom's own settings that point at credentials or carry them; not for agent commands.
_LOOM_PRIVATE = ("LOOM_DATABASE_URL", "LOOM_SYNC_TOKEN")


def passes(name: str, pass_env: Iterable[str]) -> bool:
    """True when a `pass_env` entry (a name or a glob like `GITHUB_*`) names `name`."""
    return any(fnmatchcase(name, pattern) for pattern in pass_env)


def agent_environ(
    pass_env: Iterable[str] = (), base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`base` (default: this process's environment) without its secret variables."""
    allowed = tuple(pass_env)
    source = os.environ if base is None else base
    return {
        name: value
        for name, value in source.items()
        if passes(name, allowed) or not (is_secret_variable(name, value) or name in _LOOM_PRIVATE)
    }
