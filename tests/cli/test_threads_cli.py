"""The history commands through the real `loom` entry point (main(), and a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from tests.support.threads import make_thread

from loom.__main__ import main
from loom.core.ids import new_thread_id
from loom.store.local import LocalThreadStore

LOOM = [sys.executable, "-m", "loom"]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out, err = capsys.readouterr()
    return code, out, err


def _unique_prefix(one: str, other: str) -> str:
    return one[: len(os.path.commonprefix([one, other])) + 1]  # noqa: RUF071


@pytest.fixture
def saved() -> list:
    store = LocalThreadStore()
    a = make_thread(
        "Add authentication to API", git_branch="feature/auth", messages=5,
        provider="openai", model="gpt-4o",
    )  # fmt: skip
    b = make_thread("Fix flaky parser test", git_branch="main")
    for thread in (a, b):
        store.save(thread)
    store.close()
    return [a, b]


def test_list_table_and_json(saved: list, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = saved
    code, out, _ = run(["list", "--all"], capsys)
    assert code == 0
    header, first, second = out.splitlines()
    assert header.split()[:2] == ["ID", "TITLE"] and "LAST ACTIVITY" in header
    assert first.startswith(b.id) and "Fix flaky parser test" in first and "main" in first
    assert second.startswith(a.id) and "feature/auth" in second and " 5 " in second
    assert "just now" in first or "ago" in first
    code, out, _ = run(["list", "--all", "--json", "--limit", "1"], capsys)
    assert [row["id"] for row in json.loads(out)] == [b.id]
    assert json.loads(out)[0]["message_count"] == 3


def test_list_when_empty(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["list"], capsys)
    assert code == 0 and "No threads yet" in out


def test_search_prints_snippets_and_full_ids(saved: list, capsys) -> None:
    a, _ = saved
    code, out, _ = run(["search", "authentication"], capsys)
    assert code == 0
    (line, snippet) = out.splitlines()  # piped: no `**` markers, no path/branch/id again
    assert line.startswith(a.id) and snippet.strip() == "Add authentication to API"
    code, out, _ = run(["search", "authentication", "--json"], capsys)
    (hit,) = json.loads(out)
    assert hit["id"] == a.id and "**authentication**" in hit["snippet"]
    assert isinstance(hit["rank"], float)
    code, out, _ = run(["search", "feature/auth"], capsys)
    assert out.splitlines() == [line]  # found by its branch, which the line shows
    code, out, _ = run(["search", "zzzunmatched"], capsys)
    assert code == 0 and "No threads match" in out
    code, _, err = run(["search", "///"], capsys)
    assert code == 1 and "no words to search" in err


def test_show_accepts_prefixes_and_reports_missing_or_ambiguous(saved: list, capsys) -> None:
    a, b = saved
    code, out, _ = run(["show", _unique_prefix(a.id, b.id)[2:]], capsys)
    assert code == 0 and "Add authentication to API" in out and "file_read" in out
    code, _, err = run(["show", "T-ffffffff"], capsys)
    assert code == 1 and "no thread matches 'T-ffffffff'" in err and "loom list" in err
    common = os.path.commonprefix([a.id, b.id])  # noqa: RUF071 (strings, not paths)
    code, _, err = run(["show", common], capsys)
    assert code == 1 and "matches 2 threads" in err


def test_export_json_and_markdown(saved: list, capsys, tmp_path: Path) -> None:
    a, _ = saved
    code, out, _ = run(["export", a.id], capsys)
    assert code == 0 and json.loads(out) == json.loads(a.to_json())
    target = tmp_path / "a.md"
    code, _, err = run(["export", a.id, "--format", "markdown", "-o", str(target)], capsys)
    assert code == 0 and "Exported" in err
    text = target.read_text()
    assert text.startswith("# Add authentication to API") and "## You" in text
    assert "- **Model:** openai:gpt-4o\n" in text  # as `--model` takes it
    code, _, err = run(["export", a.id, "--format", "pdf"], capsys)
    assert code == 1 and "unknown format" in err


def test_delete_and_restore(saved: list, capsys) -> None:
    a, b = saved
    code, out, _ = run(["delete", _unique_prefix(a.id, b.id)], capsys)
    assert code == 0 and f"loom restore {a.id}" in out
    _, out, _ = run(["list", "--all", "--json"], capsys)
    assert [row["id"] for row in json.loads(out)] == [b.id]
    _, out, _ = run(["restore"], capsys)
    assert a.id in out
    code, out, _ = run(["restore", a.id], capsys)
    assert code == 0 and "Restored" in out
    _, out, _ = run(["list", "--all", "--json"], capsys)
    assert {row["id"] for row in json.loads(out)} == {a.id, b.id}
    code, _, err = run(["restore", a.id], capsys)
    assert code == 1 and "no thread matches" in err


def test_delete_with_an_unwritable_data_dir_is_a_clear_error(saved: list, capsys) -> None:
    a, _ = saved
    store = LocalThreadStore()
    store.paths.trash_dir.write_text("a file where the trash folder should be")
    code, _, err = run(["delete", a.id], capsys)
    assert code == 1 and f"could not delete {a.id}" in err
    assert store.path_for(a.id).exists()


def test_resume_prints_the_seed_summary(saved: list, capsys, tmp_path: Path) -> None:
    a, _ = saved
    store = LocalThreadStore()
    thread = store.load(a.id)
    assert thread is not None
    thread.git_current_commit_sha = "a1b2c3d4e5f6a7b8"
    thread.git_end_dirty = True
    thread.workspace_root = str(tmp_path)
    store.save(thread)
    os.chdir(tmp_path.parent)
    code, out, _ = run(["resume", a.id], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"Resuming thread: {a.id}"
    assert lines[1] == 'Title: "Add authentication to API"'
    assert lines[2] == "Messages: 5"
    assert lines[3].startswith("Last activity: ")
    assert lines[4] == "Git: feature/auth @ a1b2c3d (dirty)"
    assert "Warning: the thread's workspace is" in out


def test_doctor_reports_bad_files_and_repairs(saved: list, capsys) -> None:
    code, out, _ = run(["doctor"], capsys)
    assert code == 0 and "No problems found" in out
    store = LocalThreadStore()
    bad = store.path_for(new_thread_id())
    bad.write_bytes(b'{"truncated": ')
    code, out, _ = run(["doctor"], capsys)
    assert code == 1 and "unreadable thread files: 1" in out and "--repair" in out
    code, out, _ = run(["doctor", "--repair"], capsys)
    # Quarantined: only a person can fix it, so doctor says so and exits 1.
    assert code == 1 and "Quarantined files: 1" in out and bad.name in out
    assert "loom doctor --restore" in out
    assert not bad.exists()


def test_remote_options_hand_over_to_the_sync_module(monkeypatch, capsys) -> None:
    calls = []
    fake = types.ModuleType("loom.cli.remote")
    vars(fake).update(
        remote_list=lambda limit, as_json: calls.append(("list", limit, as_json)),
        remote_search=lambda q, limit, as_json: calls.append(("search", q, limit, as_json)),
    )
    monkeypatch.setitem(sys.modules, "loom.cli.remote", fake)
    assert run(["list", "--remote", "--limit", "5"], capsys)[0] == 0
    assert run(["search", "login", "flow", "--remote", "--json"], capsys)[0] == 0
    assert calls == [("list", 5, False), ("search", "login flow", 20, True)]


def test_fast_path_imports_no_framework(saved: list) -> None:
    code = (
        "import sys; from loom.cli.fast import try_fast_path;"
        "assert try_fast_path(['list']) == 0; assert try_fast_path(['search', 'parser']) == 0;"
        "heavy = {'typer', 'pydantic', 'rich', 'click', 'orjson', 'anthropic', 'openai'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_real_entry_point(saved: list) -> None:
    a, _ = saved
    listed = subprocess.run([*LOOM, "list", "--all"], capture_output=True, text=True)
    assert listed.returncode == 0 and a.id in listed.stdout
    found = subprocess.run([*LOOM, "search", "parser", "--json"], capture_output=True, text=True)
    assert found.returncode == 0 and json.loads(found.stdout)[0]["title"] == "Fix flaky parser test"
    missing = subprocess.run([*LOOM, "show", "nope"], capture_output=True, text=True)
    assert missing.returncode == 1 and "no thread matches 'nope'" in missing.stderr
    helped = subprocess.run([*LOOM, "search", "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and "commit SHA prefix" in helped.stdout
    version = subprocess.run([*LOOM, "--version"], capture_output=True, text=True)
    assert version.stdout.startswith("loom ")


def test_fast_path_never_hides_a_file_the_index_has_not_seen(saved: list, capsys) -> None:
    import time as _time

    from loom.store.serialize import thread_to_bytes

    store = LocalThreadStore()
    old = _time.time() - 60
    os.utime(store.threads_dir, (old, old))
    run(["list", "--all"], capsys)  # records a settled marker: the next list trusts the index
    from loom.store.index import MARKER_KEY

    assert store.index.get_state(MARKER_KEY) not in (None, "racy")
    newcomer = make_thread("dropped in by another program")
    (store.threads_dir / f"{newcomer.id}.json").write_bytes(thread_to_bytes(newcomer))
    code, out, _ = run(["list", "--all", "--json"], capsys)
    assert code == 0 and newcomer.id in {row["id"] for row in json.loads(out)}


def test_list_and_search_on_a_read_only_data_dir(saved: list, tmp_path: Path) -> None:
    import shutil

    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {tmp_path}"],
        capture_output=True,
    )
    if shutil.which("unshare") is None or probe.returncode != 0:
        pytest.skip("cannot create a mount namespace here")
    from loom.store.serialize import thread_to_bytes

    a, b = saved
    store = LocalThreadStore()
    newcomer = make_thread("arrived after the last index update")  # the index is stale
    store.path_for(newcomer.id).write_bytes(thread_to_bytes(newcomer))
    data = store.paths.data
    loom = " ".join(LOOM)
    script = (
        f"mount --bind {data} {data} && mount -o remount,bind,ro {data} && "
        f"{loom} list --all --json && {loom} search parser --json"
    )
    done = subprocess.run(["unshare", "-m", "sh", "-ec", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert a.id in done.stdout and b.id in done.stdout and newcomer.id in done.stdout
    assert "Fix flaky parser test" in done.stdout
    assert "reading thread files directly" in done.stderr


def test_delete_and_restore_go_through_the_store_factory(saved: list, monkeypatch, capsys) -> None:
    from loom.store import factory

    a, _ = saved
    calls: list[str] = []

    class Recording:  # stands in for the syncing store a logged-in user gets
        def __init__(self) -> None:
            self.local = LocalThreadStore()

        def __getattr__(self, name: str):
            calls.append(name)
            return getattr(self.local, name)

        def close(self) -> None:
            calls.append("close")

    monkeypatch.setattr(factory, "open_thread_store", lambda *_, **__: Recording())
    assert run(["delete", a.id], capsys)[0] == 0
    assert run(["restore", a.id], capsys)[0] == 0
    assert calls == ["resolve", "delete", "close", "restore", "close"]


def test_a_file_edited_in_place_is_noticed_by_list_and_search(saved: list) -> None:
    a, b = saved
    store = LocalThreadStore()
    folder_before = os.stat(store.threads_dir).st_mtime_ns
    listing = subprocess.run([*LOOM, "list", "--all", "--json"], capture_output=True, text=True)
    assert listing.returncode == 0
    for thread, title in ((a, "Renamed by hand"), (b, "Edited in vim")):
        path = store.path_for(thread.id)
        data = json.loads(path.read_bytes())
        data["metadata"]["title"] = title
        data["conversation"]["messages"][0]["content"] += " zebrafish"
        with open(path, "r+b") as handle:  # same inode, the folder untouched
            handle.write(json.dumps(data, indent=2).encode())
            handle.truncate()
    assert os.stat(store.threads_dir).st_mtime_ns == folder_before
    listing = subprocess.run([*LOOM, "list", "--all", "--json"], capture_output=True, text=True)
    titles = {row["id"]: row["title"] for row in json.loads(listing.stdout)}
    assert titles == {a.id: "Renamed by hand", b.id: "Edited in vim"}
    found = subprocess.run([*LOOM, "search", "Renamed", "--json"], capture_output=True, text=True)
    assert [hit["id"] for hit in json.loads(found.stdout)] == [a.id]
    found = subprocess.run([*LOOM, "search", "zebrafish", "--json"], capture_output=True, text=True)
    assert sorted(hit["id"] for hit in json.loads(found.stdout)) == sorted([a.id, b.id])
    assert LocalThreadStore().list()[0].title in ("Renamed by hand", "Edited in vim")


def test_an_id_is_found_by_the_start_of_its_random_tail(saved: list, capsys) -> None:
    # ids begin with their creation time: threads made together share ~12 characters
    a, b = saved
    tail = a.id[-12:-4]
    assert not a.id.startswith(("T-" + tail, tail)) and not b.id.endswith(a.id[-12:])
    code, out, err = run(["show", tail], capsys)
    assert code == 0, err
    assert "Add authentication to API" in out
    code, out, _ = run(["export", a.id[-6:], "--format", "markdown"], capsys)
    assert code == 0 and out.startswith("# Add authentication to API")
    code, _, err = run(["show", "ffff"], capsys)  # neither a prefix nor a tail
    assert code == 1 and "no thread matches 'ffff'" in err


def test_list_shows_this_projects_threads_and_search_finds_every_projects(
    tmp_path: Path,
) -> None:
    """Two projects named alike and the one the person is in: `loom list` shows this
    project's threads with their project, `--all` every one (the alike names as paths),
    and `loom search` finds across projects by the branch, showing each one's project."""
    here = tmp_path / "shop"
    (here / ".git").mkdir(parents=True)
    (here / "src").mkdir()
    one, two = tmp_path / "a" / "api", tmp_path / "b" / "api"
    store = LocalThreadStore()
    ours = make_thread("Tidy the cart", git_branch="release-7", workspace_root=str(here))
    theirs = make_thread("Tidy the cart", git_branch="release-7", workspace_root=str(one))
    other = make_thread("Tidy the cart", git_branch="main", workspace_root=str(two))
    for thread in (ours, theirs, other):
        store.save(thread)
    store.close()

    listed = subprocess.run([*LOOM, "list"], capture_output=True, text=True, cwd=here / "src")
    assert listed.returncode == 0, listed.stderr
    header, *lines = listed.stdout.splitlines()
    assert "PROJECT" in header.split()
    assert len(lines) == 1 and lines[0].startswith(ours.id) and " shop " in lines[0]
    assert "2 in other projects" in listed.stderr and "loom list --all" in listed.stderr

    every = subprocess.run([*LOOM, "list", "--all"], capture_output=True, text=True, cwd=here)
    rows = {line.split()[0]: line for line in every.stdout.splitlines()[1:]}
    assert set(rows) == {ours.id, theirs.id, other.id}
    assert "/a/api " in rows[theirs.id] and "/b/api " in rows[other.id]
    assert " shop " in rows[ours.id] and every.stderr == ""

    found = subprocess.run([*LOOM, "search", "release-7"], capture_output=True, text=True, cwd=here)
    hits = [line for line in found.stdout.splitlines() if line.startswith("T-")]
    assert {line.split()[0] for line in hits} == {ours.id, theirs.id}
    assert any("(api, release-7" in line for line in hits)
    assert any("(shop, release-7" in line for line in hits)
