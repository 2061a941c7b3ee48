"""Bad files and a damaged loom.db, through the `loom` command a person runs.

Each class is tried with several cases (see the CASES constants); every command must
end with a clear message and an exit code, never a traceback, and lose nothing.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from tests.store.helpers import make_thread

from loom.core.ids import new_thread_id
from loom.paths import LoomPaths
from loom.permissions.grants import GrantStore
from loom.store.local import LocalThreadStore
from loom.store.serialize import thread_to_bytes

LOOM = [sys.executable, "-m", "loom"]


def loom(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [*LOOM, *args], capture_output=True, text=True, timeout=timeout, env=os.environ.copy()
    )
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return result


def _save(titles: list[str], messages: int = 3) -> list[str]:
    store = LocalThreadStore()
    ids = []
    for title in titles:
        thread = make_thread(title, messages=messages)
        store.save(thread)
        ids.append(thread.id)
    store.close()
    return ids


# -- deeply nested JSON ------------------------------------------------------------------

NESTING = [
    ("array", lambda d: "[" * d + "]" * d),
    ("object", lambda d: '{"a":' * d + "1" + "}" * d),
    ("inside a message", None),
]
DEPTHS = [250, 5_000, 200_000]


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("shape", [n for n, _ in NESTING])
def test_deeply_nested_files_are_quarantined(shape: str, depth: int) -> None:
    (good,) = _save(["a good thread"])
    bad_id = new_thread_id()
    path = LoomPaths.from_env().threads_dir / f"{bad_id}.json"
    make = dict(NESTING)[shape]
    if make is None:
        data = json.loads(thread_to_bytes(make_thread("deep")))
        data["id"] = bad_id
        text = json.dumps(data).replace(
            '"content": "deep"', '"content": ' + "[" * depth + "]" * depth, 1
        )
    else:
        text = make(depth)
    path.write_text(text)
    listed = loom("list", "--json")
    assert listed.returncode == 0
    ids = [row["id"] for row in json.loads(listed.stdout)]
    assert good in ids and bad_id not in ids
    assert loom("search", "good").returncode == 0
    doctor = loom("doctor")
    assert doctor.returncode == 1 and bad_id in doctor.stdout and "--restore" in doctor.stdout
    assert loom("show", good).returncode == 0
    assert not path.exists()  # kept in quarantine, never deleted
    assert (LoomPaths.from_env().quarantine_dir / path.name).read_text() == text


# -- invalid timestamps --------------------------------------------------------------------

BAD_TIMES = [
    "zz",
    "",
    "2026-13-45T99:99:99Z",
    "0000-00-00",
    12345,
    None,
    "9999-12-31T23:59:59-23:59",
]
TIME_FIELDS = ["last_activity_at", "created_at", "updated_at"]


@pytest.mark.parametrize("field", TIME_FIELDS)
def test_invalid_timestamps_are_repaired_and_reported(field: str) -> None:
    ids = _save([f"thread {i}" for i in range(len(BAD_TIMES))])
    threads_dir = LoomPaths.from_env().threads_dir
    for thread_id, bad in zip(ids, BAD_TIMES, strict=True):
        path = threads_dir / f"{thread_id}.json"
        data = json.loads(path.read_bytes())
        data[field] = bad
        path.write_text(json.dumps(data))
    listed = loom("list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert sorted(r["id"] for r in json.loads(listed.stdout)) == sorted(ids)
    assert loom("list").returncode == 0
    for thread_id in ids:
        shown = loom("show", thread_id)
        assert shown.returncode == 0 and thread_id in shown.stdout
        data = json.loads((threads_dir / f"{thread_id}.json").read_bytes())
        assert isinstance(data[field], str) and data[field][:2] in ("19", "20")
    doctor = loom("doctor")
    assert doctor.returncode == 0, doctor.stdout  # repaired: nothing needs a person
    assert f"Originals of files Loom repaired: {len(BAD_TIMES)}" in doctor.stdout
    assert "is not a timestamp" in doctor.stdout


# -- a damaged loom.db --------------------------------------------------------------------

SEEDS = list(range(8))
FLIPS = 300


def _grants(project: Path) -> list[str]:
    store = GrantStore(project)
    try:
        return sorted(g.scope for g in store.list())
    finally:
        store.close()


@pytest.mark.parametrize("seed", SEEDS)
def test_a_partly_corrupted_database_is_rebuilt_from_the_files(seed: int, tmp_path: Path) -> None:
    words = ["alpha", "parser", "login", "cache", "retry", "token"]
    ids = _save([f"{words[i % 6]} thread {i}" for i in range(40)], messages=30)
    project = tmp_path / "proj"
    project.mkdir()
    store = GrantStore(project)
    for i in range(5):
        store.add("shell", "prefix", f"make target{i}")
    store.close()
    database = LoomPaths.from_env().database
    conn = sqlite3.connect(database)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    raw = bytearray(database.read_bytes())
    rng = random.Random(seed)
    for _ in range(FLIPS):
        raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
    database.write_bytes(bytes(raw))

    # Every history command still works (a traceback fails `loom()`), and whatever
    # the damage, `loom doctor --repair` leaves a sound database holding every thread.
    said = []

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        result = loom(*args)
        said.append(result.stdout + result.stderr)
        return result

    assert run("list", "--json", "--limit", "100").returncode == 0
    assert run("search", "parser").returncode == 0
    assert run("show", ids[3]).returncode == 0
    assert run("doctor").returncode in (0, 1)
    repaired = run("doctor", "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert "No problems found" in repaired.stdout
    listed = run("list", "--json", "--limit", "100")
    assert sorted(r["id"] for r in json.loads(listed.stdout)) == sorted(ids)
    found = run("search", "parser", "--json", "--limit", "100")
    assert len(json.loads(found.stdout)) == len([i for i in range(40) if i % 6 == 1])
    # Grants: kept when their table could be read, and any loss was said out loud.
    kept = _grants(project)
    said = "\n".join(said)
    if kept != [f"make target{i}" for i in range(5)]:
        assert "LOST" in said or "permission_grants" in said, said
