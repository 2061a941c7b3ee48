"""Issue 20, routes 1, 2 and 3: a sandboxed command cannot reach Loom's own state (the
checkpoint store's git config, loom.db's grants and MCP approvals, trust.json, threads),
so nothing it plants there runs later outside the sandbox. Real `loom run --yes`, real
bubblewrap, real git and SQLite. Loom's home lies inside the writable temp folder here,
the hardest case: only the sandbox's own mounts keep it out of reach.

Each payload would touch `layout.outside / "pwned"` if it ever ran outside the sandbox;
that folder is writable by no sandboxed command."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLlmServer
from tests.support.git import init_repo
from tests.support.loom_cli import loom_in_process
from tests.support.sandbox import Layout, require_sandbox, run_command


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Layout:
    require_sandbox()
    systmp = tmp_path / "systmp"
    home = systmp / "loomhome"  # inside the writable temp folder
    home.mkdir(parents=True)
    monkeypatch.setenv("LOOM_HOME", str(home))
    project = init_repo(tmp_path / "proj", {"app.py": "print('hi')\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    return Layout(project, outside, systmp, home)


def _rows(database: Path, table: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(database) as conn:
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        return conn.execute(f"SELECT * FROM {table}").fetchall() if exists else []


def test_the_checkpoint_store_config_is_out_of_reach(server: FakeLlmServer, layout: Layout) -> None:
    run_command(server, layout, "echo one > made.txt")  # the first change: a checkpoint
    configs = list((layout.loom_home / "data" / "checkpoints").glob("*/**/config"))
    assert configs, "the first command should have made the checkpoint store"
    before = {path: path.read_bytes() for path in configs}
    marker = layout.outside / "pwned"
    payload = (
        f"ls -A {layout.loom_home}/data; "
        f"for c in {layout.loom_home}/data/checkpoints/*/*/config "
        f"{layout.loom_home}/data/checkpoints/*/config; do "
        f'printf \'[core]\\n\\tfsmonitor = "touch {marker}"\\n\' >> "$c"; done; '
        f"mkdir -p {layout.loom_home}/data/checkpoints/x"
    )
    result = run_command(server, layout, payload)
    assert "Read-only file system" in result["content"], result["content"]
    # the next change snapshots with `git status` in that store, outside the sandbox
    run_command(server, layout, "echo two >> made.txt")
    assert {path: path.read_bytes() for path in configs} == before
    assert not marker.exists()


def test_loom_db_grants_and_mcp_approvals_are_out_of_reach(
    server: FakeLlmServer, layout: Layout
) -> None:
    run_command(server, layout, "true")  # loom.db exists from here on
    database = layout.loom_home / "data" / "loom.db"
    assert database.is_file()
    grants, approvals = _rows(database, "permission_grants"), _rows(database, "mcp_approvals")
    script = (
        "import sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1])\n"
        'db.execute("INSERT INTO permission_grants (project_root, tool, scope_kind, scope,'
        " created_at) VALUES (?, 'shell', 'any', '*', 'now')\", (sys.argv[2],))\n"
        "db.execute(\"INSERT INTO mcp_approvals VALUES (?, 'evil', 'f', 'now')\","
        " (sys.argv[2],))\n"
        "db.commit()\n"
    )
    (layout.project / "plant.py").write_text(script)
    result = run_command(server, layout, f"python3 plant.py {database} {layout.project.resolve()}")
    assert result.get("is_error") is True, result["content"]
    assert "unable to open database file" in result["content"]
    assert _rows(database, "permission_grants") == grants
    assert _rows(database, "mcp_approvals") == approvals
    # nor can the command see a thread, the trust store or the pending queue
    listing = run_command(
        server,
        layout,
        f"find {layout.loom_home}/data {layout.loom_home}/state {layout.loom_home}/config "
        f"-mindepth 1 | wc -l; touch {layout.loom_home}/data/trust.json",
    )
    assert listing["content"].startswith("0\n"), listing["content"]
    assert "Read-only file system" in listing["content"]
    assert any((layout.loom_home / "data" / "threads").iterdir())


def test_loom_home_cannot_be_moved_aside_and_replaced(
    server: FakeLlmServer, layout: Layout
) -> None:
    """Moving the Loom home away and making a fresh one (with a planted trust.json and a
    database) would hand the next run state the command chose."""
    run_command(server, layout, "true")
    home = layout.loom_home
    result = run_command(
        server,
        layout,
        f"mv {home} {home}.old; mv {home}/data {home}/data.old; rm -rf {home}; "
        f"mkdir -p {home}/data && echo '{{}}' > {home}/data/trust.json",
    )
    assert result.get("is_error") is True
    assert not Path(f"{home}.old").exists()
    assert (home / "data" / "loom.db").is_file()
    assert not (home / "data.old").exists()


PLANT_THREADS = """
import glob, json, os, sys
home, marker = sys.argv[1], sys.argv[2]
option = "--output=" + marker


def attempt(what, action):
    try:
        action()
        print("done:", what)
    except OSError as exc:
        print("refused:", what, exc)


def flip():
    names = glob.glob(home + "/data/threads/*.json")
    print("threads seen:", len(names))
    for name in names:
        data = json.load(open(name))
        data.update(is_private=False, visibility="organization", git_initial_commit_sha=option)
        json.dump(data, open(name, "w"))
    open(home + "/data/threads/probe.json", "w").close()


def queue():
    os.makedirs(home + "/state/sync", exist_ok=True)
    with open(home + "/state/sync/pending.json", "w") as out:
        json.dump([{"thread_id": "T-planted", "op": "upsert"}], out)


def plant():
    with open(home + "/data/threads/T-planted.json", "w") as out:
        json.dump({"id": "T-planted", "git_initial_commit_sha": option}, out)


attempt("flip", flip)
attempt("queue", queue)
attempt("plant", plant)
"""


def test_thread_files_and_the_sync_queue_are_out_of_reach(
    server: FakeLlmServer, layout: Layout
) -> None:
    """Route 3 from inside the sandbox: flip a private thread to shared, queue it for
    sync, and give threads a git option for a starting commit."""
    run_command(server, layout, "true", "--private")
    home = layout.loom_home
    threads = sorted((home / "data" / "threads").glob("*.json"))
    assert threads, "the private run should have saved its thread"
    before = {path: path.read_bytes() for path in threads}
    marker = layout.outside / "pwned"
    (layout.project / "plant.py").write_text(PLANT_THREADS)
    result = run_command(server, layout, f"python3 plant.py {home} {marker}")
    content = result["content"]
    assert "threads seen: 0" in content, content  # hidden: not even listed
    for what in ("flip", "queue", "plant"):
        assert f"refused: {what}" in content and f"done: {what}" not in content, content
    assert {path: path.read_bytes() for path in threads} == before
    assert json.loads(threads[0].read_text())["is_private"] is True
    assert not (home / "data" / "threads" / "T-planted.json").exists()
    assert not (home / "state" / "sync" / "pending.json").exists()
    listed = loom_in_process(["list", "--json"], layout.project, server)
    assert "T-planted" not in listed.stdout
    rows = {row["id"]: row for row in json.loads(listed.stdout)}
    assert all(rows[path.stem]["is_private"] for path in threads)
    assert not marker.exists()
