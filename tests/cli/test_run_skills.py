"""Skills and agent files through `loom run` (and `/skills`, `/agents` in the REPL) against
the fake LLM server: only names and descriptions up front, the `skill` tool loads the
body and the files beside it, and bad files are skipped with a line saying why."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.chat_pty import PROMPT, spawn
from tests.support.loom_cli import Done
from tests.support.wire import tool_results


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def skill(folder: Path, name: str, description: str, body: str) -> Path:
    text = f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"
    return write(folder / name / "SKILL.md", text)


def user_config_dir() -> Path:
    return Path(os.environ["LOOM_HOME"]) / "config"


def tools_offered(server: FakeLlmServer, index: int = 0) -> dict[str, str]:
    return {t["name"]: t["description"] for t in server.requests[index].json["tools"]}


def test_skills_are_listed_up_front_and_loaded_by_the_skill_tool(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    steps = "1. Bump the version in pyproject.toml.\n2. Read checklist.md and follow it."
    skill(project / ".loom/skills", "release", "Cut a release: tag, changelog, upload", steps)
    write(project / ".loom/skills/release/checklist.md", "- tag it\n- push the tag\n")
    skill(project / ".claude/skills", "triage", "Sort new issues by area", "Label by folder.")
    skill(user_config_dir() / "skills", "style", "The person's writing style", "Short lines.")
    beside = {"name": "release", "file": "checklist.md"}
    server.add(Turn(tool_calls=[FakeToolCall("skill", {"name": "release"})]),
               Turn(tool_calls=[FakeToolCall("skill", beside)]),
               Turn(tool_calls=[FakeToolCall("skill", {"name": "nope"})]),
               Turn(text="released"))  # fmt: skip
    done = cli(["run", "-p", "cut a release"], project, server)
    assert done.returncode == 0, done.stderr
    listing = tools_offered(server)["skill"]
    assert "- release: Cut a release: tag, changelog, upload" in listing
    assert "- triage: Sort new issues by area" in listing and "- style:" in listing
    assert "Bump the version" not in listing  # bodies are not sent until loaded
    loaded = tool_results(server.requests[1])[0]
    assert "Bump the version in pyproject.toml" in loaded and "checklist.md" in loaded
    assert "- push the tag" in tool_results(server.requests[2])[-1]
    assert (
        "there is no skill 'nope'; the skills are: release, triage, style"
        in (tool_results(server.requests[3])[-1])
    )


def test_no_skills_no_skill_tool_and_the_task_tool_lists_the_agents(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    write(project / ".loom/agents/reviewer.md",
          "---\nname: reviewer\ndescription: Reviews a diff for bugs\ntools: file_read\n---\n"
          "You review code.\n")  # fmt: skip
    server.add(Turn(text="ok"))
    done = cli(["run", "-p", "hi"], project, server)
    assert done.returncode == 0, done.stderr
    offered = tools_offered(server)
    assert "skill" not in offered
    task = offered["task"]
    assert "- general:" in task and "- explore: A fast read-only explorer" in task
    assert "- reviewer: Reviews a diff for bugs (.loom/agents/reviewer.md)" in task
    schema = next(t for t in server.requests[0].json["tools"] if t["name"] == "task")
    assert schema["input_schema"]["properties"]["agent"]["enum"] == [
        "general",
        "explore",
        "reviewer",
    ]


def test_bad_agent_and_skill_files_are_skipped_with_a_clear_line(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    write(project / ".loom/agents/plain.md", "Just text, no frontmatter.\n")
    write(project / ".loom/agents/broken.md", "---\nname: [unclosed\n---\nbody\n")
    write(project / ".loom/agents/Bad Name.md", "---\nname: Bad Name\ndescription: x\n---\nb\n")
    write(project / ".loom/agents/nodesc.md", "---\nname: nodesc\n---\nbody\n")
    write(project / ".loom/agents/alias.md",
          "---\nname: alias\ndescription: d\nmodel: sonnet\n---\nbody\n")  # fmt: skip
    write(project / ".loom/agents/reviewer.md",
          "---\nname: reviewer\ndescription: the project's\n---\nProject prompt.\n")  # fmt: skip
    write(user_config_dir() / "agents/reviewer.md",
          "---\nname: reviewer\ndescription: mine\n---\nMy prompt.\n")  # fmt: skip
    write(project / ".loom/skills/empty/SKILL.md", "---\nname: empty\ndescription: d\n---\n")
    skill(project / ".loom/skills", "dup", "the project's", "one")
    skill(project / ".agents/skills", "dup", "another", "two")
    secret = write(tmp_path / "outside/SKILL.md", "---\nname: leak\ndescription: x\n---\nSECRET\n")
    (project / ".loom/skills/leak").symlink_to(secret.parent)
    server.add(Turn(text="ok"))
    done = cli(["run", "-p", "hi"], project, server)
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert ".loom/agents/plain.md: no frontmatter: the file must start with a line '---'" in err
    assert ".loom/agents/broken.md: the frontmatter is not valid YAML (line " in err
    assert "name 'Bad Name' is not an agent name" in err
    assert ".loom/agents/nodesc.md: no 'description:'" in err
    assert "model 'sonnet' is not provider:model-id" in err
    assert ("loom: .loom/agents/reviewer.md replaces your own agent 'reviewer' "
            "(~/.config/loom/agents/reviewer.md) in this project") in err  # fmt: skip
    assert ".loom/skills/empty/SKILL.md: the body (the skill's instructions" in err
    assert "skill 'dup' is defined twice: .loom/skills/dup/SKILL.md is used" in err
    assert ".loom/skills/leak/SKILL.md leads outside the project (a symlink); not read" in err
    offered = tools_offered(server)
    assert "SECRET" not in json.dumps(server.requests[0].json) and "leak" not in offered["skill"]
    assert "- reviewer: the project's (.loom/agents/reviewer.md)" in offered["task"]


def test_skills_and_agents_in_the_repl(server: FakeLlmServer, project: Path) -> None:
    skill(project / ".loom/skills", "release", "Cut a release", "steps")
    write(project / ".loom/agents/plain.md", "no frontmatter\n")
    child = spawn([], project, server)
    child.expect("plain.md: no frontmatter")  # the header says what was skipped
    child.expect(PROMPT)
    child.sendline("/skills")
    child.expect(r"release\s+Cut a release  \(\.loom/skills/release/SKILL\.md\)")
    child.expect(PROMPT)
    child.sendline("/agents")
    child.expect(r"explore\s+A fast read-only explorer")
    child.expect("skipped: .loom/agents/plain.md: no frontmatter")
    child.expect(PROMPT)
    child.sendeof()
    child.expect("Thread saved|Bye|$")


def test_many_skills_are_listed_within_a_bound_and_each_still_loads(
    cli: Callable[..., Done], server: FakeLlmServer, project: Path
) -> None:
    from loom.delegation.skills import LISTING_MAX_CHARS

    for i in range(80):  # ~16 KB of descriptions: more than the up-front list may hold
        skill(project / ".loom/skills", f"skill-{i:02d}", f"Does task {i} " + "x" * 180, f"B{i}")
    server.add(Turn(tool_calls=[FakeToolCall("skill", {"name": "skill-79"})]), Turn(text="ok"))
    done = cli(["run", "-p", "hi"], project, server)
    assert done.returncode == 0, done.stderr
    listing = tools_offered(server)["skill"].split("Skills:\n", 1)[1]
    assert len(listing) <= LISTING_MAX_CHARS
    assert "- skill-00: Does task 0" in listing  # the first ones with their descriptions
    assert "Does task 79" not in listing and "skill-79" in listing  # the rest by name
    assert tool_results(server.requests[1])[0].startswith("# Skill: skill-79")  # loads


def test_slash_agents_lists_the_built_in_ones_once_bracketed(
    server: FakeLlmServer, project: Path
) -> None:
    child = spawn([], project, server)
    child.expect(PROMPT)
    child.sendline("/agents")
    child.expect(r"general .*\n")
    line = child.after
    assert isinstance(line, str)
    child.expect(PROMPT)
    child.sendeof()
    assert "(built in" in line and "((built in" not in line, line
