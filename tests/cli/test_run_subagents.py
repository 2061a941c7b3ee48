"""Sub-agents (the `task` tool) through `loom run` against the fake LLM server, whose
scripts answer each child by the text of its first message: the family of threads,
what a child may do (tools, permissions, depth), parallel children, worktree children,
and children that fail."""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn, first_user_text
from tests.support.config_files import user_config
from tests.support.loom_cli import Done
from tests.support.wire import system_of, tool_results

from loom.delegation.agents import builtin_agents


def task(prompt: str, agent: str | None = None, description: str = "look into it",
         **extra: str) -> FakeToolCall:  # fmt: skip
    args: dict[str, Any] = {"description": description, "prompt": prompt, **extra}
    if agent:
        args["agent"] = agent
    return FakeToolCall("task", args)


STYLED_LINE = r"[\r\n](?:\x1b\[[0-9;?]*[A-Za-z])*"  # a line start, its erase and style codes


def thread_file(thread_id: str) -> dict[str, Any]:
    path = Path(os.environ["LOOM_HOME"]) / "data" / "threads" / f"{thread_id}.json"
    return json.loads(path.read_text())


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def requests_of(server: FakeLlmServer, brief: str) -> list[Any]:
    return [r for r in server.requests if brief in first_user_text(r.format, r.json)]


def tool_names(request: Any) -> set[str]:
    tools = request.json.get("tools", [])
    return {tool.get("name") or tool["function"]["name"] for tool in tools}


def test_a_child_answers_as_the_tool_result_and_the_threads_link_both_ways(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    (project / "auth.py").write_text("def login():\n    pass\n")
    brief = "Find where login is handled"
    server.add(Turn(tool_calls=[task(brief, "explore", "find login")]), Turn(text="auth.py."))
    server.for_first_message(brief,
                             Turn(tool_calls=[FakeToolCall("file_read", {"path": "auth.py"})]),
                             Turn(text="login is in auth.py:1"))  # fmt: skip
    done = cli(["run", "-p", "where is login?", "-o", "stream-json"], project, server)
    assert done.returncode == 0, done.stderr
    events = lines(done.stdout)
    call_id = next(e for e in events if e["type"] == "loom.tool_executing")["call_id"]
    result = tool_results(server.requests[-1])[0]
    assert result.startswith("login is in auth.py:1")
    child_id = result.rsplit("thread ", 1)[1].rstrip("]")
    parent_id = events[-1]["thread_id"]
    child = thread_file(child_id)
    assert child["parent_thread_id"] == parent_id and child["parent_call_id"] == call_id
    assert child["agent"] == "explore" and child["metadata"]["title"] == "find login"
    assert child["conversation"]["messages"][0]["content"] == brief  # its own context
    assert "parent_thread_id" not in thread_file(parent_id)

    first, second = requests_of(server, brief)
    explorer = next(a for a in builtin_agents() if a.name == "explore")
    system = system_of(first)
    assert system.startswith(explorer.prompt) and "# You are a sub-agent" in system
    assert "# Environment" in system  # the same prompt builder as any session
    assert tool_names(first) <= set(explorer.tools or ()) and "file_read" in tool_names(first)
    assert "where is login?" not in json.dumps(first.json)  # nothing of the parent's talk
    # stream-json: the child's messages in Claude Code's shape, under the task call
    nested = [e for e in events if e.get("parent_tool_use_id") == call_id]
    assert [e["type"] for e in nested] == ["user", "assistant", "user", "assistant"]
    statuses = [e["status"] for e in events if e["type"] == "loom.subagent_status"]
    assert statuses == ["started", "completed"]
    progress = [e["message"] for e in events if e["type"] == "loom.tool_progress"]
    assert "explore: file_read auth.py" in progress
    assert len(second.json["messages"]) == 3  # brief, its call, its result
    own = sum(_input(e["message"]["usage"]) for e in events
              if e["type"] == "assistant" and e["parent_tool_use_id"] is None)  # fmt: skip
    assert _input(events[-1]["usage"]) > own  # the child's tokens count too


def _input(usage: dict[str, Any]) -> int:
    """Input tokens, cached ones too (Anthropic's `input_tokens` are the uncached part)."""
    return (
        usage["input_tokens"]
        + (usage.get("cache_read_input_tokens") or 0)
        + (usage.get("cache_creation_input_tokens") or 0)
    )


def test_show_names_the_family(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    server.add(Turn(tool_calls=[task("Summarise notes.txt")]), Turn(text="done"))
    server.for_first_message("Summarise notes.txt", Turn(text="one line"))
    done = cli(["run", "-p", "go", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    parent_id = json.loads(done.stdout)["thread_id"]
    child_id = tool_results(server.requests[-1])[0].rsplit("thread ", 1)[1].rstrip("]")
    server.for_first_message("Summarise notes.txt", Turn(text="carried on"))  # resumed
    again = cli(["run", "--resume", child_id, "-p", "and the rest?", "-o", "json"],
                project, server)  # fmt: skip
    assert again.returncode == 0 and json.loads(again.stdout)["result"] == "carried on"
    assert thread_file(child_id)["parent_thread_id"] == parent_id
    shown = cli(["show", child_id], project, server)
    assert f"sub-agent (general) of {parent_id}, call " in shown.stdout
    parent = cli(["show", parent_id], project, server)
    assert f"sub-agent (general): {child_id}" in parent.stdout
    found = json.loads(cli(["search", "Summarise", "--json"], project, server).stdout)
    assert child_id in {hit["id"] for hit in found}  # its brief is searchable like any text


def test_parallel_children_overlap_and_max_parallel_bounds_them(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    briefs = ["Check module alpha", "Check module beta", "Check module gamma"]
    look = FakeToolCall("directory_list", {})

    def run(max_parallel: int) -> dict[str, list[float]]:
        """Each child's request arrival times (its first call, then its answer)."""
        user_config(f"[agents]\nmax_parallel = {max_parallel}\n")
        server.add(Turn(tool_calls=[task(b, "explore", b) for b in briefs]), Turn(text="all done"))
        for brief in briefs:  # a slow first answer, so siblings that run together overlap
            server.for_first_message(brief, Turn(tool_calls=[look], delay=1.0),
                                     Turn(text=f"{brief}: fine"))  # fmt: skip
        start = len(server.requests)
        done = cli(["run", "-p", "check all", "-o", "json"], project, server)
        assert done.returncode == 0, done.stderr
        results = tool_results(server.requests[-1])
        assert [r.split(":")[0] for r in results] == briefs  # kept in the calls' order
        server._state.by_first_message.clear()
        return {b: [r.at for r in server.requests[start:]
                    if first_user_text(r.format, r.json) == b] for b in briefs}  # fmt: skip

    together = run(4)
    # every child asked its first question before any child got its first answer back
    assert max(times[0] for times in together.values()) < min(
        times[1] for times in together.values()
    )
    one_by_one = run(1)
    ordered = sorted(one_by_one.values())
    for earlier, later in itertools.pairwise(ordered):
        assert earlier[-1] < later[0]  # a child starts only when the one before has ended


def test_a_child_has_the_parents_permissions_never_more(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    brief = "Write the file out.txt"
    write = FakeToolCall("file_write", {"path": "out.txt", "content": "x\n"})
    server.add(Turn(tool_calls=[task(brief)]), Turn(text="it could not"))
    server.for_first_message(brief, Turn(tool_calls=[write]), Turn(text="refused, sorry"))
    done = cli(["run", "-p", "go"], project, server)  # headless, no --yes
    assert done.returncode == 0, done.stderr
    assert not (project / "out.txt").exists()
    assert "loom: refused file_write out.txt: it needs approval and nobody can" in done.stderr
    child_request = requests_of(server, brief)[-1]
    assert "nobody can approve it in a headless run" in tool_results(child_request)[0]
    # max_depth 1: no grandchildren. The general agent keeps its parent's tool list (the
    # parent's cached prefix serves it), `task` too, and is told the tool refuses
    first = requests_of(server, brief)[0]
    assert tool_names(first) == tool_names(server.requests[0])
    assert "cannot start sub-agents of your own here" in json.dumps(first.json)

    server.add(Turn(tool_calls=[task("Write it now")]), Turn(text="written"))
    server.for_first_message("Write it now", Turn(tool_calls=[write]), Turn(text="done"))
    done = cli(["run", "-p", "go", "--yes"], project, server)
    assert done.returncode == 0, done.stderr
    assert (project / "out.txt").read_text() == "x\n"


def test_depth_limit_and_grandchildren(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    user_config("[agents]\nmax_depth = 2\n")
    server.add(Turn(tool_calls=[task("Level one")]), Turn(text="top done"))
    server.for_first_message("Level one", Turn(tool_calls=[task("Level two")]),
                             Turn(text="one done"))  # fmt: skip
    server.for_first_message("Level two", Turn(tool_calls=[task("Level three")]),
                             Turn(text="two done"))  # fmt: skip
    done = cli(["run", "-p", "go", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    assert "task" in tool_names(requests_of(server, "Level one")[0])
    assert "cannot start" not in json.dumps(requests_of(server, "Level one")[0].json)
    # past the depth limit the tool is there (its parent's tool list) but refuses
    assert "cannot start sub-agents" in json.dumps(requests_of(server, "Level two")[0].json)
    refused = tool_results(requests_of(server, "Level two")[-1])[0]
    assert refused.startswith("A sub-agent cannot start sub-agents of its own here")
    assert not requests_of(server, "Level three")
    grandchild = tool_results(requests_of(server, "Level one")[-1])[0]
    assert grandchild.startswith("two done")
    grandchild_id = grandchild.rsplit("thread ", 1)[1].rstrip("]")
    child_id = thread_file(grandchild_id)["parent_thread_id"]
    top_id = json.loads(done.stdout)["thread_id"]
    assert thread_file(child_id)["parent_thread_id"] == top_id

    tree = cli(["list", "--tree"], project, server)
    assert tree.returncode == 0, tree.stderr
    rows = [line for line in tree.stdout.splitlines() if line.startswith("T-")]
    assert [row.split()[0] for row in rows] == [top_id, child_id, grandchild_id]
    assert "  ↳ look into it" in rows[1] and "    ↳ look into it" in rows[2]
    as_json = json.loads(cli(["list", "--tree", "--json"], project, server).stdout)
    assert [(r["id"], r["depth"], r["parent_thread_id"]) for r in as_json] == [
        (top_id, 0, None),
        (child_id, 1, top_id),
        (grandchild_id, 2, child_id),
    ]
    flat = cli(["list", "--json"], project, server).stdout
    assert {r["id"] for r in json.loads(flat)} == {top_id, child_id, grandchild_id}


def test_a_child_that_fails_its_first_model_call_is_a_tool_error(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    brief = "Explain the build"
    server.add(Turn(tool_calls=[task(brief)]), Turn(text="the helper failed; here is mine"))
    server.for_first_message(brief, Turn(status=400, error_message="model not allowed"))
    done = cli(["run", "-p", "explain", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr  # the parent goes on
    result = tool_results(server.requests[-1])[0]
    assert result.startswith("The sub-agent failed:") and "model not allowed" in result
    assert json.loads(done.stdout)["result"] == "the helper failed; here is mine"


def test_custom_agent_prompt_tools_model_and_an_unknown_tool(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    agents = project / ".loom" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code\ntools: file_read, content_*\n"
        "model: openai:gpt-5-mini\n---\nYou are a strict reviewer. Cite lines.\n"
    )
    (agents / "typo.md").write_text(
        "---\nname: typo\ndescription: d\ntools: file_raed\n---\nbody\n"
    )
    server.add(Turn(tool_calls=[task("Review auth.py", "reviewer")]),
               Turn(tool_calls=[task("Anything", "typo")]), Turn(text="ok"))  # fmt: skip
    server.for_first_message("Review auth.py", Turn(text="LGTM"))
    done = cli(["run", "-p", "review"], project, server)
    assert done.returncode == 0, done.stderr
    (child,) = requests_of(server, "Review auth.py")
    assert child.format == "responses" and child.json["model"] == "gpt-5-mini"
    assert system_of(child).startswith("You are a strict reviewer. Cite lines.")
    assert tool_names(child) == {"file_read", "content_search"}
    refused = tool_results(server.requests[-1])[-1]
    assert "agent 'typo' (.loom/agents/typo.md) lists tools that do not exist: file_raed" in refused
    assert not requests_of(server, "Anything")  # never started
    # the person is told at the start too, as for the other bad agent files
    assert ("loom: .loom/agents/typo.md: `tools:` names no tool of this session: file_raed; "
            "the task tool refuses agent 'typo' until you fix it") in done.stderr  # fmt: skip
    assert "reviewer.md: `tools:`" not in done.stderr


def test_a_worktree_child_leaves_its_changes_on_its_branch(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid"}  # fmt: skip
    subprocess.run(["git", "add", "-A"], cwd=project, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=project, check=True, env=env)
    write = FakeToolCall("file_write", {"path": "new.txt", "content": "from the child\n"})
    server.add(Turn(tool_calls=[task("Add new.txt", isolation="worktree"),
                                task("Just look", isolation="worktree")]),
               Turn(text="done"))  # fmt: skip
    server.for_first_message("Add new.txt", Turn(tool_calls=[write]), Turn(text="added"))
    server.for_first_message("Just look", Turn(text="nothing to change"))
    done = cli(["run", "-p", "go", "--yes"], project, server)
    assert done.returncode == 0, done.stderr
    changed, untouched = tool_results(server.requests[-1])
    assert not (project / "new.txt").exists()
    assert "Its changes are committed as " in changed
    child = thread_file(changed.rsplit("thread ", 1)[1].rstrip("]"))
    place = Path(child["worktree"]["path"])
    name, branch = child["worktree"]["name"], child["worktree"]["branch"]
    assert f"on branch {branch} in {place}" in changed
    assert f"`loom worktree merge {name}`" in changed
    assert (place / "new.txt").read_text() == "from the child\n"
    assert "its worktree was removed" in untouched
    listed = cli(["worktree", "list"], project, server).stdout
    assert name in listed and listed.count("loom/task-") == 1
    # the branch holds the work: a merge brings it in (not "Already up to date")
    assert cli(["worktree", "diff", name], project, server).stdout.count("+from the child") == 1
    merged = cli(["worktree", "merge", name], project, server)
    assert merged.returncode == 0, merged.stderr
    assert (project / "new.txt").read_text() == "from the child\n"


def test_a_sub_agent_in_the_repl_shows_its_steps_and_asks_there(
    server: FakeLlmServer, project: Path
) -> None:
    from tests.support.chat_pty import PROMPT, saved_thread, spawn

    brief = "Append a line to notes.txt"
    edit = FakeToolCall("file_edit", {"path": "notes.txt", "old_string": "one",
                                      "new_string": "one\ntwo"})  # fmt: skip
    server.add(Turn(tool_calls=[task(brief, description="extend notes")]),
               Turn(text="The helper extended it."))  # fmt: skip
    server.for_first_message(brief, Turn(tool_calls=[edit]), Turn(text="appended two"))
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.sendline("extend the notes")
    child.expect(r"sub-agent general started: extend notes  \[(T-[0-9a-f-]+)\]")
    assert isinstance(child.match, re.Match)
    child_thread = child.match.group(1)
    child.expect(STYLED_LINE + r"    ● file_edit notes\.txt")  # its step, under the task line
    child.expect("sub-agent general \\(extend notes\\) asks")
    child.expect(r"\[y\] once")
    child.send("y")
    child.expect(STYLED_LINE + "    appended two")  # what it said
    child.expect("sub-agent general completed: extend notes")
    child.expect("The helper extended it.")
    child.expect(PROMPT)
    child.sendeof()
    parent = saved_thread(child)
    assert (project / "notes.txt").read_text() == "one\ntwo\n"
    assert thread_file(child_thread)["parent_thread_id"] == parent["id"]


def test_a_childs_decisions_join_the_projects_decision_graph(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    """A child's decision_log entries are the project's, a worktree child's too (its
    thread works in the worktree's folder, yet the graph is the repository's)."""
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid"}  # fmt: skip
    subprocess.run(["git", "add", "-A"], cwd=project, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=project, check=True, env=env)

    def log(title: str) -> FakeToolCall:
        return FakeToolCall("decision_log", {"type": "decision", "title": title})

    server.add(Turn(tool_calls=[task("Pick a parser"),
                                task("Pick a cache", isolation="worktree")]),
               Turn(tool_calls=[FakeToolCall("decision_query", {"query": "recent"})]),
               Turn(text="both picked"))  # fmt: skip
    server.for_first_message("Pick a parser", Turn(tool_calls=[log("Use the stdlib parser")]),
                             Turn(text="stdlib"))  # fmt: skip
    server.for_first_message("Pick a cache", Turn(tool_calls=[log("Cache in SQLite")]),
                             Turn(text="sqlite"))  # fmt: skip
    done = cli(["run", "-p", "decide", "--yes", "-o", "json"], project, server)
    assert done.returncode == 0, done.stderr
    parent_sees = tool_results(server.requests[-1])[-1]  # the parent's decision_query
    assert "Use the stdlib parser" in parent_sees and "Cache in SQLite" in parent_sees
    listed = cli(["decisions", "--json"], project, server)
    assert listed.returncode == 0, listed.stderr
    rows = {row["title"]: row for row in json.loads(listed.stdout)}
    assert {"Use the stdlib parser", "Cache in SQLite"} <= set(rows)
    assert {rows[t]["workspace_root"] for t in ("Use the stdlib parser", "Cache in SQLite")} == {
        str(project)
    }


def test_a_project_may_lower_the_sub_agent_limits_never_raise_them(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    """A cloned repository's `.loom.toml` cannot let a prompt-injected model fan out
    into a deep tree of sub-agents on the person's key: raising [agents] limits is
    ignored with a line saying so; lowering them applies."""
    (project / ".loom.toml").write_text("[agents]\nmax_depth = 3\nmax_parallel = 64\n")
    server.add(Turn(tool_calls=[task("Level one")]), Turn(text="top done"))
    server.for_first_message("Level one", Turn(text="one done"))
    done = cli(["run", "-p", "go"], project, server)
    assert done.returncode == 0, done.stderr
    for key in ("agents.max_depth", "agents.max_parallel"):
        assert f"'{key}' is ignored in a project file (a project may lower" in done.stderr
    # max_depth 1 holds: the child's task tool refuses, and it is told so
    assert "cannot start sub-agents" in json.dumps(requests_of(server, "Level one")[0].json)

    (project / ".loom.toml").write_text("[agents]\nmax_depth = 0\n")
    server.add(Turn(text="did it myself"))
    done = cli(["run", "-p", "go"], project, server)
    assert done.returncode == 0, done.stderr
    assert "ignored" not in done.stderr
    assert "task" not in tool_names(server.requests[-1])  # nobody delegates: no task tool


def test_a_childs_changes_are_undone_with_its_parents_turn_or_its_own(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    write = FakeToolCall("file_write", {"path": "made.txt", "content": "by the child\n"})

    def delegate() -> tuple[str, str]:
        server.add(Turn(tool_calls=[task("Make made.txt")]), Turn(text="made"))
        server.for_first_message("Make made.txt", Turn(tool_calls=[write]), Turn(text="done"))
        done = cli(["run", "-p", "make it", "--yes", "-o", "json"], project, server)
        assert done.returncode == 0, done.stderr
        assert (project / "made.txt").read_text() == "by the child\n"
        child_id = tool_results(server.requests[-1])[0].rsplit("thread ", 1)[1].rstrip("]")
        return json.loads(done.stdout)["thread_id"], child_id

    parent_id, _child_id = delegate()
    undone = cli(["undo", "-t", parent_id], project, server)  # the parent turn, with the child
    assert undone.returncode == 0, undone.stderr
    assert not (project / "made.txt").exists()

    _parent_id, child_id = delegate()
    undone = cli(["undo", "-t", child_id], project, server)  # the child's own thread
    assert undone.returncode == 0, undone.stderr
    assert not (project / "made.txt").exists()


def test_a_worktree_child_outside_a_repository_is_refused_clearly(
    cli: Callable[..., Done], server: FakeLlmServer, tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    server.add(Turn(tool_calls=[task("Edit in isolation", isolation="worktree")]),
               Turn(text="I will do it here"))  # fmt: skip
    done = cli(["run", "-p", "go", "--yes"], plain, server)
    assert done.returncode == 0, done.stderr
    refused = tool_results(server.requests[-1])[0]
    assert refused.startswith("No worktree for the sub-agent:")
    assert "is not in a git repository" in refused and not requests_of(server, "Edit in isolation")


def test_the_repls_cost_counts_its_sub_agents(server: FakeLlmServer, project: Path) -> None:
    """/cost (and the toolbar and the closing line, from the same total) count what the
    sub-agents used, as `-o json` does: the person pays for both."""
    from tests.support.chat_pty import PROMPT, spawn

    brief = "Count the lines of notes.txt"
    server.add(Turn(tool_calls=[task(brief)], input_tokens=100, output_tokens=10),
               Turn(text="It has one line.", input_tokens=100, output_tokens=10))  # fmt: skip
    server.for_first_message(brief, Turn(text="one line", input_tokens=1000, output_tokens=100))
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.sendline("how long are the notes?")
    child.expect("It has one line.")
    child.expect(PROMPT)
    child.sendline("/cost")
    child.expect(r"This session: 1,200 tokens in, 120 out")
    child.expect(PROMPT)
    child.sendeof()
