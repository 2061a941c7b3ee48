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
from tests.support.loom_cli import Done, loom_in_process
from tests.support.threads import make_thread

from loom.core.ids import new_thread_id
from loom.paths import LoomPaths
from loom.permissions.grants import GrantStore
from loom.store.local import LocalThreadStore
from loom.store.serialize import thread_to_bytes

LOOM = [sys.executable, "-m", "loom"]


def loom(*args: str) -> Done:
    """`loom ARGS` in this process (a traceback would fail the test right there); the
    tests about processes (worker processes, signals) start `python -m loom` themselves."""
    result = loom_in_process(list(args), Path.cwd(), None)
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
    listed = loom("list", "--all", "--json")
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
    listed = loom("list", "--all", "--json")
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


def _database_bytes() -> tuple[Path, bytearray]:
    """loom.db with its WAL folded in, and its bytes to damage."""
    database = LoomPaths.from_env().database
    conn = sqlite3.connect(database)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return database, bytearray(database.read_bytes())


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
    database, raw = _database_bytes()
    rng = random.Random(seed)
    for _ in range(FLIPS):
        raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
    database.write_bytes(bytes(raw))

    # Every history command still works (a traceback fails `loom()`), and whatever
    # the damage, `loom doctor --repair` leaves a sound database holding every thread.
    said: list[str] = []

    def run(*args: str) -> Done:
        result = loom(*args)
        said.append(result.stdout + result.stderr)
        return result

    assert run("list", "--all", "--json", "--limit", "100").returncode == 0
    assert run("search", "parser").returncode == 0
    assert run("show", ids[3]).returncode == 0
    assert run("doctor").returncode in (0, 1)
    repaired = run("doctor", "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert "No problems found" in repaired.stdout
    listed = run("list", "--all", "--json", "--limit", "100")
    assert sorted(r["id"] for r in json.loads(listed.stdout)) == sorted(ids)
    found = run("search", "parser", "--json", "--limit", "100")
    assert len(json.loads(found.stdout)) == len([i for i in range(40) if i % 6 == 1])
    # Grants: kept when their table could be read, and any loss was said out loud.
    kept = _grants(project)
    told = "\n".join(said)
    if kept != [f"make target{i}" for i in range(5)]:
        assert "LOST" in told or "permission_grants" in told, told


def test_a_schema_byte_that_is_not_text_leads_to_the_rebuild(tmp_path: Path) -> None:
    # SQLite names the bad schema entry in its error, Python cannot decode the message
    # and raised UnicodeDecodeError from `connect`, which no repair path caught: every
    # command failed.
    from tests.fakes.llm_server import FakeLlmServer, Turn

    ids = _save(["parser thread", "login thread"])
    project = tmp_path / "proj"
    project.mkdir()
    store = GrantStore(project)
    store.add("shell", "prefix", "make test")
    store.close()
    database, raw = _database_bytes()
    raw[raw.index(b"CREATE TABLE thread_index_writes") + 7] = 0xFF  # CREATE \xffABLE ...
    database.write_bytes(bytes(raw))

    listed = loom("list", "--all", "--json")
    assert listed.returncode == 0
    assert sorted(row["id"] for row in json.loads(listed.stdout)) == sorted(ids)
    assert "damaged" in listed.stderr and "rebuilt" in listed.stderr
    assert "permission_grants (1 rows)" in listed.stderr
    assert loom("search", "parser").returncode == 0
    assert _grants(project) == ["make test"]
    with FakeLlmServer([Turn(text="fine")]) as server:
        run = loom_in_process(["run", "-p", "hi"], project, server)
    assert run.returncode == 0 and run.stdout == "fine\n", run.stderr


# -- the first index of a big history ------------------------------------------------------


def test_first_list_of_many_threads_shows_progress_and_indexes_in_parallel() -> None:
    threads_dir = LoomPaths.from_env().threads_dir
    threads_dir.mkdir(parents=True, exist_ok=True)
    ids = []
    for i in range(600):
        thread = make_thread(f"bulk thread {i}", messages=3)
        (threads_dir / f"{thread.id}.json").write_bytes(thread_to_bytes(thread))
        ids.append(thread.id)
    bad = threads_dir / f"{new_thread_id()}.json"
    bad.write_text('{"broken": ')
    env = {**os.environ, "LOOM_INDEX_PARALLEL_MIN": "100"}  # worker processes parse
    done = subprocess.run(
        [*LOOM, "list", "--all", "--json", "--limit", "1000"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert sorted(r["id"] for r in json.loads(done.stdout)) == sorted(ids)
    assert "indexing 601 thread files" in done.stderr
    assert "indexed 601 thread files in" in done.stderr and "files/s" in done.stderr
    assert "moved 1 unreadable thread file(s)" in done.stderr
    # The list left the message rows for later: the first search writes them, with progress.
    first = loom("search", ids[0], "--json")  # the oldest: indexed by a worker too
    assert [r["id"] for r in json.loads(first.stdout)] == [ids[0]]
    assert "indexing the messages of 600 threads for search" in first.stderr
    assert "indexed the messages of 600 threads in" in first.stderr
    again = loom("search", ids[0], "--json")
    assert [r["id"] for r in json.loads(again.stdout)] == [ids[0]]
    assert "indexed" not in again.stderr


# -- very large messages ---------------------------------------------------------------------

BIG = {
    "one 5 MB line": "x" * 5_000_000,
    "200k short lines": "line of **markdown**\n" * 200_000,
    "3 MB of JSON-ish text": '{"k": [1, 2, 3]}, ' * 170_000,
}


@pytest.mark.parametrize("role", ["user", "assistant", "tool"])
def test_show_folds_large_contents(role: str) -> None:
    from loom.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
    from loom.core.thread import Thread

    thread = Thread.new()
    thread.append(UserMessage(content="start"))
    for text in BIG.values():
        if role == "user":
            thread.append(UserMessage(content=text))
        elif role == "assistant":
            call = ToolCall(id="c1", tool_name="file_write", arguments_json={"content": text})
            thread.append(AssistantMessage(content=text, tool_calls=[call]))
        else:
            thread.append(ToolMessage(tool_call_id="c1", tool_name="shell", content=text))
    thread.touch()
    store = LocalThreadStore()
    store.save(thread)
    store.close()
    shown = loom("show", thread.id)
    assert shown.returncode == 0
    assert len(shown.stdout) < 100_000  # heads only, never megabytes of terminal output
    assert shown.stdout.count("folded:") >= len(BIG)
    assert "5.0 MB more" in shown.stdout and "`loom export" in shown.stdout


# -- errors name the real config file --------------------------------------------------------


@pytest.mark.parametrize("where", ["LOOM_HOME", "XDG_CONFIG_HOME"])
def test_errors_name_the_config_file_where_it_really_is(where: str, tmp_path: Path) -> None:
    env = {key: "" for key in os.environ if key.endswith("_API_KEY")}  # "": unset
    env["LOOM_HOME"] = ""
    if where == "LOOM_HOME":
        env["LOOM_HOME"] = str(tmp_path / "home")
        config = tmp_path / "home" / "config" / "config.toml"
    else:
        env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
        env["XDG_DATA_HOME"] = str(tmp_path / "data")
        env["XDG_STATE_HOME"] = str(tmp_path / "state")
        config = tmp_path / "xdg" / "loom" / "config.toml"
    missing_key = loom_in_process(
        ["run", "--model", "openai:gpt-4o", "-p", "hi"], tmp_path, None, **env
    )
    assert missing_key.returncode != 0 and "Traceback" not in missing_key.stderr
    assert str(config) in missing_key.stderr and "~/.config" not in missing_key.stderr
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[model\ndefault = ")
    broken = loom_in_process(["run", "-p", "hi"], tmp_path, None, **env)
    assert broken.returncode != 0 and "Traceback" not in broken.stderr
    assert str(config) in broken.stderr, broken.stderr


def test_ctrl_c_during_the_first_index_stops_cleanly_and_keeps_the_work() -> None:
    import signal
    import time

    threads_dir = LoomPaths.from_env().threads_dir
    threads_dir.mkdir(parents=True, exist_ok=True)
    data = thread_to_bytes(make_thread("bulk", messages=3))
    first = json.loads(data)
    ids = []
    for _ in range(2000):
        first["id"] = new_thread_id()
        (threads_dir / f"{first['id']}.json").write_text(json.dumps(first))
        ids.append(first["id"])
    env = {**os.environ, "LOOM_INDEX_PARALLEL_MIN": "100"}
    proc = subprocess.Popen(
        [*LOOM, "list", "--all"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    assert proc.stderr is not None
    assert "indexing 2000 thread files" in proc.stderr.readline()
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    _, err = proc.communicate(timeout=30)
    assert "Traceback" not in err, err
    assert proc.returncode in (130, 0)  # 0: it finished first on a fast machine
    if proc.returncode == 130:
        assert "interrupted; the index keeps what it has so far" in err
    gone = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True)
    for _ in range(20):
        if not gone.stdout.split():
            break
        time.sleep(0.25)
        gone = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True)
    assert gone.stdout.split() == [], "worker processes outlived the command"
    listed = loom("list", "--all", "--json", "--limit", "5000")
    assert sorted(r["id"] for r in json.loads(listed.stdout)) == sorted(ids)


def _fifty_megabyte_thread(workspace: Path) -> str:
    from loom.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
    from loom.core.thread import Thread

    thread = Thread.new(workspace_root=str(workspace))
    thread.provider, thread.model = "openai", "gpt-4o"
    output = "    value = compute(item, retries=3)  # a line of tool output\n" * 20_000
    thread.append(UserMessage(content="read every log"))
    for i in range(42):  # ~1.2 MB each: about 50 MB
        call = ToolCall(id=f"c{i}", tool_name="shell", arguments_json={"command": "cat log"})
        thread.append(AssistantMessage(content="reading", tool_calls=[call]))
        thread.append(ToolMessage(tool_call_id=f"c{i}", tool_name="shell", content=output))
    thread.touch()
    store = LocalThreadStore()
    store.save(thread)
    store.close()
    return thread.id


def test_resume_of_a_50_mb_thread_reaches_the_model_and_stays_interruptible(
    tmp_path: Path,
) -> None:
    import signal
    import time

    from tests.fakes.llm_server import FakeLlmServer, Turn

    thread_id = _fifty_megabyte_thread(tmp_path)
    # every request answers: the thread is over the context budget, so a compaction
    # summary (the provider's fast model) may be asked for before the turn's own call
    with FakeLlmServer(default=Turn(text="resumed fine")) as server:
        env = {**os.environ, "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.openai_base_url}
        command = [*LOOM, "--model", "openai:gpt-4o", "resume", thread_id, "-p", "and now?"]
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert "resumed fine" in done.stdout
        assert "and now?" in json.dumps(server.requests[-1].json["input"])  # Responses API
        # SIGTERM mid-way (a CI job cancelled): it ends promptly and keeps the thread.
        server.add(Turn(text="never seen", delay=60))
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        time.sleep(3)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode != 0 and "Traceback" not in err, err[-2000:]
    assert loom("show", thread_id).returncode == 0


# -- lone surrogates from the model ----------------------------------------------------------

HALVES = ["\ud83d", "\ude00", "ok \ud83d", "\ud83d\ud83d", "\udfff end"]


@pytest.mark.parametrize("half", HALVES)
def test_a_lone_surrogate_from_the_model_never_breaks_saving(half: str, tmp_path: Path) -> None:
    from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn

    with FakeLlmServer() as server:
        server.add(Turn(text=["before ", half, " after"]))  # cut mid-emoji between chunks
        server.add(Turn(tool_calls=[FakeToolCall("file_read", {"path": f"a{half}.txt"})]))
        server.add(Turn(text="second answer \ud83d"))
        command = ["--model", "openai:gpt-4o", "run", "-o", "json", "-p", "hi"]
        first = loom_in_process(command, tmp_path, server)
        assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr[-2000:]
        thread_id = json.loads(first.stdout)["thread_id"]
        again = ["--model", "openai:gpt-4o", "run", "-r", thread_id, "-p", "more"]
        second = loom_in_process(again, tmp_path, server)
        assert second.returncode == 0 and "Traceback" not in second.stderr, second.stderr[-2000:]
    raw = (LoomPaths.from_env().threads_dir / f"{thread_id}.json").read_bytes()
    raw.decode("utf-8")  # strict: the file is valid UTF-8
    assert "\ufffd" in json.loads(raw)["conversation"]["messages"][1]["content"]
    assert loom("show", thread_id).returncode == 0
    assert thread_id in loom("search", "answer").stdout


# -- temp files of killed saves ------------------------------------------------------------------


def test_stale_temp_files_are_cleaned_and_not_counted(tmp_path: Path) -> None:
    import fcntl
    import time

    _save(["a thread"])
    paths = LoomPaths.from_env()
    temp = paths.data / "tmp"
    temp.mkdir(exist_ok=True)
    old = time.time() - 3600
    stale = []
    for i in range(6):  # old and unlocked, in both places saves have used
        folder = temp if i % 2 else paths.threads_dir
        path = folder / f".T-x{i}.json.{os.getpid()}.tmp"
        path.write_bytes(b"{" * 10_000)
        os.utime(path, (old, old))
        stale.append(path)
    dead = temp / ".T-dead.json.999999999.tmp"  # fresh, but its process is gone
    dead.write_bytes(b"{")
    busy = temp / ".T-busy.json.1.tmp"  # old, but a save still holds it
    busy.write_bytes(b"{")
    os.utime(busy, (old, old))
    young = temp / f".T-young.json.{os.getpid()}.tmp"  # a save in progress right now
    young.write_bytes(b"{")
    with open(busy, "rb") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        doctor = loom("doctor")
        assert doctor.returncode == 0, doctor.stdout
        assert "Removed 7 temp file(s) left by killed saves" in doctor.stdout
        assert "No problems found" in doctor.stdout
        assert busy.exists() and young.exists()
    assert not any(p.exists() for p in [*stale, dead])


# -- doctor --restore ----------------------------------------------------------------------------


def test_doctor_restore_takes_a_fixed_file_back_from_quarantine() -> None:
    (good,) = _save(["a good thread"])
    paths = LoomPaths.from_env()
    broken = make_thread("was broken")
    path = paths.threads_dir / f"{broken.id}.json"
    fixed = thread_to_bytes(broken)
    path.write_bytes(fixed[:120])  # truncated
    assert loom("list").returncode == 0  # quarantines it
    doctor = loom("doctor")
    assert doctor.returncode == 1 and path.name in doctor.stdout and "--restore" in doctor.stdout

    still = loom("doctor", "--restore", path.name)  # not fixed yet: refused, nothing moves
    assert still.returncode == 1 and "still cannot be read" in still.stderr
    assert (paths.quarantine_dir / path.name).exists() and not path.exists()
    missing = loom("doctor", "--restore", "T-nothing.json")
    assert missing.returncode == 1 and "no file T-nothing.json" in missing.stderr

    (paths.quarantine_dir / path.name).write_bytes(fixed)  # the person fixes it
    done = loom("doctor", "--restore", str(paths.quarantine_dir / path.name))
    assert done.returncode == 0 and f"Restored {broken.id}" in done.stdout
    assert path.exists() and not (paths.quarantine_dir / f"{path.name}.reason.txt").exists()
    listed = {r["id"] for r in json.loads(loom("list", "--all", "--json").stdout)}
    assert listed == {good, broken.id}
    assert loom("doctor").returncode == 0
    again = loom("doctor", "--restore", path.name)
    assert again.returncode == 1 and "no file" in again.stderr
