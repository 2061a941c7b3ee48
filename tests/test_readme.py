"""The README points only at files that are in the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# `bench/x.py`, `tests/web`, `src/loom/prompts/anthropic.md`, `../shared/design.md`, ...
REPO_PATH = re.compile(r"`((?:\.\./|bench/|tests/|src/|scripts/)[^`\s]*)`")


def test_every_path_the_readme_names_is_in_the_repository() -> None:
    text = (ROOT / "README.md").read_text("utf-8")
    named = REPO_PATH.findall(text)
    assert len(named) > 5  # the pattern still finds the README's paths
    missing = [path for path in named if path.startswith("../") or not (ROOT / path).exists()]
    assert missing == []
