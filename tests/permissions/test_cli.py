"""`loom permissions list|revoke`, through the real Typer app."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from loom.cli.app import build_app
from loom.permissions import Decision, GrantStore, PermissionPolicy
from tests.support.permissions import SHELL


def loom(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), list(args), env={"COLUMNS": "250"})
    return result.exit_code, result.output


def test_list_empty_does_not_create_the_database(loom_home: Path) -> None:
    code, out = loom("permissions", "list")
    assert code == 0 and "No saved permission grants" in out
    assert not list(loom_home.rglob("loom.db"))
    assert loom("permissions", "list", "--json") == (0, "[]\n")


def test_list_and_revoke(project: Path, tmp_path: Path) -> None:
    policy = PermissionPolicy(GrantStore(project))
    first = policy.record(SHELL, {"command": "pytest -x"}, "allow_always")
    other = tmp_path / "other"
    other.mkdir()
    GrantStore(other).add("file_write", "dir", "src/")
    code, out = loom("permissions", "list")
    assert code == 0
    assert "commands starting with `pytest`" in out and "paths under src/" in out
    assert str(project.resolve()) in out
    code, out = loom("permissions", "list", "--json", "--project", str(project))
    rows = json.loads(out)
    assert first is not None
    assert [(r["id"], r["tool"], r["scope"]) for r in rows] == [(first.id, "shell", "pytest")]
    code, out = loom("permissions", "revoke", str(first.id))
    assert code == 0 and f"Revoked grant {first.id}" in out
    assert policy.decide(SHELL, {"command": "pytest -x"}) is Decision.ASK  # seen at once
    code, out = loom("permissions", "revoke", "--all")
    assert code == 0 and "Revoked 1 grant." in out
    assert GrantStore().list() == []


def test_revoke_bad_input(project: Path) -> None:
    GrantStore(project).add("shell", "prefix", "make")
    code, out = loom("permissions", "revoke", "999")
    assert code == 1 and "no saved grant has id 999" in out
    code, out = loom("permissions", "revoke", "abc")
    assert code == 2 and "not a grant id" in out
    code, out = loom("permissions", "revoke")
    assert code == 2 and "either a grant ID or --all" in out
    code, out = loom("permissions", "revoke", "1", "--all")
    assert code == 2
    code, out = loom("permissions", "list", "--project", str(project / "nope"))
    assert code == 2 and "is not a folder" in out
    assert len(GrantStore().list()) == 1


def test_unreadable_database_is_a_clear_error(loom_home: Path) -> None:
    database = GrantStore().database
    database.parent.mkdir(parents=True, exist_ok=True)
    database.write_bytes(b"this is not sqlite" * 100)
    code, out = loom("permissions", "list")
    assert code == 1 and "cannot read the permission grants" in out
