"""The npm test tools of tests/npm (installed by scripts/setup from the committed lock
file). Missing tools skip a test on a developer's machine and fail it under CI=true."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

NPM_DIR = Path(__file__).resolve().parents[1] / "npm"
MODULES = NPM_DIR / "node_modules"


def npm_bin(name: str) -> Path:
    """Path of an installed npm executable (node_modules/.bin/NAME)."""
    path = MODULES / ".bin" / name
    if path.exists() and shutil.which("node"):
        return path
    message = f"{name} is not installed in {NPM_DIR}: run scripts/setup (needs Node 20 and npm)"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


def inspector_js() -> Path:
    """The MCP inspector's CLI entry point."""
    npm_bin("mcp-inspector-cli")
    return MODULES / "@modelcontextprotocol" / "inspector-cli" / "build" / "index.js"


# inspector-cli 1.0.3 reads its own package.json through a path relative to the working
# directory (`../package.json` must exist there), so it runs from inside node_modules.
INSPECTOR_CWD = MODULES
