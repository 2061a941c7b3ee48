"""`/init`: a starting AGENTS.md for the project, from the repo map and the files that say
how the project is built and tested. The person edits it; Loom (and other agents that
read AGENTS.md) read it as the project's instructions."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

MAP_TOKENS = 1500
# (file that exists, what it tells about building and testing)
HINTS = (
    ("pyproject.toml", "Python project (pyproject.toml); tests: `python -m pytest -q`"),
    ("setup.py", "Python project (setup.py); tests: `python -m pytest -q`"),
    ("package.json", "Node project (package.json); tests: `npm test`"),
    ("Cargo.toml", "Rust project (Cargo.toml); tests: `cargo test`"),
    ("go.mod", "Go module (go.mod); tests: `go test ./...`"),
    ("Makefile", "Makefile: see its targets (`make test`?)"),
    ("mix.exs", "Elixir project (mix.exs); tests: `mix test`"),
)


def languages(root: Path, limit: int = 5000) -> list[str]:
    """The most common source file extensions outside hidden and vendored folders."""
    counts: Counter[str] = Counter()
    skip = {"node_modules", "venv", ".venv", "__pycache__", "target", "dist", "build"}
    seen = 0
    for path in root.rglob("*"):
        if seen >= limit:
            break
        parts = path.relative_to(root).parts
        if any(p.startswith(".") or p in skip for p in parts):
            continue
        if path.is_file() and path.suffix:
            counts[path.suffix] += 1
            seen += 1
    return [f"{ext} ({n})" for ext, n in counts.most_common(6)]


INSTRUCTIONS_FILE = "AGENTS.md"


def agents_md(root: Path, repo_map: str) -> str:
    hints = [what for name, what in HINTS if (root / name).exists()]
    lines = [
        f"# {root.name}: notes for coding agents",
        "",
        "Loom (and other agents that read AGENTS.md) follow this file. Keep what is true,",
        "fix what is not, and add what a new teammate would need to know.",
        "",
        "## Build and test",
        "",
        *(f"- {hint}" for hint in hints or ["(say how to build and run the tests)"]),
        "",
        "## Languages",
        "",
        "- " + (", ".join(languages(root)) or "(none found)"),
        "",
        "## Conventions",
        "",
        "- (style, naming, what to avoid)",
        "",
        "## Where things are (from the repo map)",
        "",
        "```",
        repo_map.strip() or "(no source files with definitions were found)",
        "```",
        "",
    ]
    return "\n".join(lines)


def write_agents_md(root: Path) -> str:
    from loom.session import repointel_hook

    try:
        repo_map = repointel_hook(root)(MAP_TOKENS, [], [])
    except Exception:  # no map: the file is still a useful start
        repo_map = ""
    text = agents_md(root, repo_map)
    (root / INSTRUCTIONS_FILE).write_text(text, encoding="utf-8")
    return text
