"""Text from a model, a tool, a file, a repository or a thread reaches a terminal only as
text (issue 34): each command is driven with hostile text (an OSC 52 clipboard write,
CSI 2J, cursor-up and erase-line, an OSC 8 link, an OSC 0 title, a bidi override, a C1
CSI) and the raw bytes must never reach its output; the escapes show instead.

Piped output is judged here (Loom writes no colour codes when piped, so any ESC is a
leak); the REPL's pty and the tmux screen of the permission question are judged in
test_terminal_text_repl.py."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.hostile_text import (  # noqa: F401  (shared with the REPL's test)
    HOSTILE,
    OSC52,
    RAW,
    SHOWN,
    assert_text_only,
    script_hostile_turns,
)
from tests.support.loom_cli import loom


def hostile_run(server: FakeLlmServer, project: Path) -> str:
    """A run whose prompt (the thread's title), tool output, todo list, sub-agent and
    answer all carry HOSTILE; the thread's id."""
    script_hostile_turns(server, f"# Done\n\nThe answer {HOSTILE} [docs](http://evil.example/x)\n")
    done = loom(["run", "-p", f"fixes {HOSTILE}", "--yes", "--verbose"], project, server)
    assert done.returncode == 0, done.stderr
    assert_text_only(done.stdout)  # the answer
    assert_text_only(done.stderr)  # tool lines and output, the todo list, the sub-agent
    assert "step \\x1b]52" in done.stderr and "look \\x1b]52" in done.stderr
    rows = json.loads(loom(["list", "--json"], project, None).stdout)
    return next(row["id"] for row in rows if row["title"].startswith("fixes"))


def test_run_list_search_show_print_a_hostile_thread_as_text(
    server: FakeLlmServer, project: Path
) -> None:
    thread_id = hostile_run(server, project)
    listed = loom(["list"], project, None)
    assert_text_only(listed.stdout)
    assert_text_only(loom(["list", "--tree"], project, None).stdout)
    found = loom(["search", "fixes"], project, None)
    assert found.returncode == 0 and "fixes" in found.stdout
    assert_text_only(found.stdout)
    shown = loom(["show", thread_id], project, None)
    assert shown.returncode == 0, shown.stderr
    assert_text_only(shown.stdout)
    assert "(http://evil.example/x)" in shown.stdout  # a link shows where it goes


def test_json_outputs_stay_json_with_every_control_escaped(
    server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(text=f"answer {HOSTILE}"))
    done = loom(["run", "-p", f"fixes {HOSTILE}", "-o", "stream-json"], project, server)
    assert done.returncode == 0, done.stderr
    assert_text_only(done.stdout, shown=False)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["result"] == f"answer {HOSTILE}"  # the data is exact
    server.add(Turn(text=f"again {HOSTILE}"))
    done = loom(["run", "-p", "again", "-o", "json"], project, server)
    assert_text_only(done.stdout, shown=False)
    assert json.loads(done.stdout)["result"] == f"again {HOSTILE}"
    for args in (["list", "--json"], ["search", "fixes", "--json"]):
        listed = loom(args, project, None)
        assert_text_only(listed.stdout, shown=False)
        assert any(OSC52 in row["title"] for row in json.loads(listed.stdout))


def hostile_project(project: Path) -> None:
    """A cloned repository whose names carry OSC 52: an unknown `.loom.toml` key, a
    skill folder, an agent file."""
    key = OSC52.replace("\x1b", "\\u001b").replace("\x07", "\\u0007")
    (project / ".loom.toml").write_text(f'"evil{key}" = 1\n')
    skill = project / ".loom" / "skills" / f"s{OSC52}"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("no frontmatter\n")
    agents = project / ".loom" / "agents"
    agents.mkdir(parents=True)
    (agents / f"a{OSC52}.md").write_text("no frontmatter\n")


def test_start_up_warnings_and_config_show_a_hostile_repository_as_text(
    server: FakeLlmServer, project: Path
) -> None:
    hostile_project(project)
    config = loom(["config"], project, None)
    assert config.returncode == 0, config.stderr
    assert_text_only(config.stderr)  # the unknown key's warning
    assert_text_only(config.stdout, shown=False)
    server.add(Turn(text="hello"))
    done = loom(["run", "-p", "hi"], project, server)
    assert done.returncode == 0, done.stderr
    assert_text_only(done.stderr)
    assert done.stderr.count(SHOWN) >= 3  # the key, the skill folder, the agent file
    trust = loom(["trust", "--show"], project, None)
    assert_text_only(trust.stdout + trust.stderr)


def test_the_completion_menu_shows_a_file_name_as_text(project: Path) -> None:
    from types import SimpleNamespace

    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document
    from prompt_toolkit.formatted_text import to_plain_text

    from loom.cli.repl.complete import ReplCompleter

    (project / f"evil{OSC52}.py").write_text("")
    repl = SimpleNamespace(starter=SimpleNamespace(ready=False, cwd=project), commands=None)
    (found,) = ReplCompleter(repl).get_completions(Document("@evil"), CompleteEvent())
    assert found.text == f"@evil{OSC52}.py"  # Tab inserts the real name
    assert_text_only(to_plain_text(found.display))


def test_the_thread_picker_shows_a_row_as_text() -> None:
    from datetime import UTC, datetime
    from types import SimpleNamespace

    from loom.cli.thread_picker import row_text

    thread = SimpleNamespace(title=f"fixes {HOSTILE}", git_branch=f"b{OSC52}",
                             first_words=f"words {HOSTILE}\nmore", message_count=2,
                             last_activity_at=datetime.now(UTC))  # fmt: skip
    row = row_text(thread, 10_000)
    assert_text_only(row)
    assert "\n" not in row and row.startswith("fixes \\x1b]52")
    assert ", 2 messages)" in row
    assert ", 1 message)" in row_text(SimpleNamespace(**{**vars(thread), "message_count": 1}), 999)
