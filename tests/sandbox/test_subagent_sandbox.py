"""A sub-agent's commands run in its parent's sandbox, never a looser one: what the
parent's shell may not write, the child's shell may not write either, also with the
whole run approved (--yes) and for a child in its own worktree."""

from __future__ import annotations

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn, first_user_text
from tests.support.git import git
from tests.support.loom_cli import loom_in_process
from tests.support.sandbox import Layout


def child_results(server: FakeLlmServer, brief: str) -> list[dict]:
    """The tool results the child with this brief got back, in order."""
    found = []
    for request in server.requests:
        if not first_user_text(request.format, request.json).startswith(brief):  # then its context
            continue
        for message in request.json.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result" and block not in found:
                    found.append(block)
    return found


def test_a_childs_shell_is_confined_like_its_parents(server: FakeLlmServer, layout: Layout) -> None:
    git(layout.project, "commit", "-qm", "start", "--allow-empty")
    target = layout.outside / "keep.txt"
    write_out = FakeToolCall("shell", {"command": f"echo changed > {target}"})
    into_project = FakeToolCall("shell", {"command": f"echo planted > {layout.project}/p.txt"})
    briefs = ("Write outside", "From a worktree, write the main checkout")
    server.add(
        Turn(tool_calls=[
            FakeToolCall("task", {"description": "outside", "prompt": briefs[0]}),
            FakeToolCall("task", {"description": "main checkout", "prompt": briefs[1],
                                  "isolation": "worktree"}),
        ]),
        Turn(text="done"),
    )  # fmt: skip
    server.for_first_message(briefs[0], Turn(tool_calls=[write_out]), Turn(text="tried"))
    server.for_first_message(briefs[1], Turn(tool_calls=[into_project]), Turn(text="tried"))
    done = loom_in_process(["run", "-p", "go", "--yes"], layout.project, server,
                           TMPDIR=str(layout.systmp))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert target.read_text() == "original\n"
    (outside,) = child_results(server, briefs[0])
    assert outside.get("is_error") is True and "No such file" in outside["content"]  # out of view
    # a worktree child works in its checkout: the person's own checkout is outside it
    assert not (layout.project / "p.txt").exists()
    (main,) = child_results(server, briefs[1])
    # (the checkout lies under /tmp here: the child's write lands in its own /tmp)
    assert main["content"] == "(no output)\n[exit code 0]"
