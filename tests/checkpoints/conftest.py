"""The checkpoint tests' project: a small git repository with one commit, an executable
script, CRLF line ends and an ignored folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.git import git, init_repo


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = init_repo(
        tmp_path / "proj",
        {
            "app.py": "def main():\n    return 1\n",
            "run.sh": "#!/bin/sh\necho hi\n",
            "notes.txt": b"line one\r\nline two\r\n",  # CRLF kept as is
            ".gitignore": "build/\n",
        },
    )
    (root / "run.sh").chmod(0o755)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    git(root, "stash", "list")
    return root
