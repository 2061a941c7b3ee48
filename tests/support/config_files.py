"""Loom's config files in tests: the person's own, and a quiet project's."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel

from loom.config import _NOT_CONFIGURABLE, LoomConfig
from tests.support.git import init_repo

# No repo map and no decision summary in the prompt: the model sees only the test's words.
QUIET = "[repo]\nmap_tokens = 0\n[context]\ndecision_tokens = 0\n"


def user_config(text: str) -> None:
    """Write the person's own config.toml (this test's LOOM_HOME): settings a project's
    file could only give once trusted."""
    path = Path(os.environ["LOOM_HOME"]) / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def quiet_project(tmp_path: Path) -> Path:
    """`proj/` in tmp_path: a git repository whose `.loom.toml` is QUIET."""
    return init_repo(tmp_path / "proj", {".loom.toml": QUIET})


def config_keys(model: type[BaseModel] = LoomConfig, prefix: tuple[str, ...] = ()) -> list:
    """Every key of the config model, as a dotted path (tables of sections walked into;
    a dict of entries such as `lsp.servers` is one key)."""
    found = []
    for name, info in model.model_fields.items():
        if not prefix and name in _NOT_CONFIGURABLE:
            continue
        path = (*prefix, info.alias or name)
        sub = info.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            found += config_keys(sub, path)
        else:
            found.append(path)
    return found
