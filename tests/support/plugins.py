"""The test plugin site (tests/plugins/site): an installed distribution with Loom entry
points for a tool, a provider and an extractor, found through PYTHONPATH."""

from __future__ import annotations

import os
from pathlib import Path

SITE = Path(__file__).parent.parent / "plugins" / "site"


def with_plugins() -> str:
    """PYTHONPATH for a `loom` process that should find the test plugins."""
    return os.pathsep.join([str(SITE), os.environ.get("PYTHONPATH", "")])
