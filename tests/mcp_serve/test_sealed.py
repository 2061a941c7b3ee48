"""`loom mcp serve` is sealed like a session (issue 20, route 6): shell runs in the
session's sandbox under its policy, the approval question shows the whole call or the
call is refused, and the thread tools see only the served project's threads, never a
private one unless started with --include-private."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from loom.paths import LoomPaths
from loom.store.local import LocalThreadStore
from tests.support.mcp import serve_stdio_params
from tests.support.sandbox import require_sandbox
from tests.support.threads import thread_with


def text_of(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def call(project: Path, tool: str, args: dict[str, Any], *flags: str, **kw: Any) -> Any:
    """One tool call through the SDK's client; `elicit`: answers approval questions."""
    from mcp import Client

    elicit = kw.pop("elicit", None)
    params = serve_stdio_params(project, *flags, **kw)
    options = {"elicitation_callback": elicit} if elicit else {}
    async with Client(params, mode="legacy", **options) as client:
        return await client.call_tool(tool, args)


REACH = """
import os, socket, sys
port, host_pid = int(sys.argv[1]), int(sys.argv[2])
try:
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
    print("reached the host port")
except OSError as exc:
    print("no host port:", exc)
try:
    os.kill(host_pid, 0)
    print("saw a host process")
except OSError as exc:
    print("no host process:", exc)
"""


async def test_shell_runs_in_the_sandbox_of_a_session(proj: Path, tmp_path: Path) -> None:
    """The issue's finding: the served shell wrote outside the project, saw host
    processes and reached a host TCP port."""
    import socket

    require_sandbox()
    outside = tmp_path / "outside"  # neither the project nor the session's own temp
    outside.mkdir()
    systmp = tmp_path / "systmp"
    systmp.mkdir()
    (proj / "reach.py").write_text(REACH)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        command = (
            f"echo inside > in.txt; touch {outside / 'marker'}; "
            f"python3 reach.py {port} {os.getpid()}; ps -e | wc -l; echo done"
        )
        result = await call(
            proj, "shell", {"command": command}, "--allow", "shell", TMPDIR=str(systmp)
        )
    text = text_of(result)
    assert (proj / "in.txt").read_text() == "inside\n"  # it ran...
    assert not (outside / "marker").exists()  # ...confined to the project
    assert "No such file or directory" in text  # the shared /tmp is out of view
    assert "no host port:" in text and "no host process:" in text, text
    processes = int(text.split("no host process:", 1)[1].splitlines()[1])
    assert processes < 10, text  # its own PID namespace: bwrap, the shell, ps, wc


async def test_without_a_sandbox_an_allowed_shell_still_asks(proj: Path, loom_home: Path) -> None:
    config = loom_home / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[sandbox]\nmode = "ask"\n')
    result = await call(proj, "shell", {"command": "touch ran.txt"}, "--allow", "shell")
    assert result.is_error and "no sandbox confines" in text_of(result)
    assert not (proj / "ran.txt").exists()


async def test_the_approval_question_shows_the_tail_of_a_long_call(proj: Path) -> None:
    import mcp_types as types

    asked: list[str] = []

    async def person(context: Any, params: Any) -> types.ElicitResult:
        # Approves what looks harmless, as a person reading the question would.
        asked.append(params.message)
        harmless = "touch" not in params.message
        return types.ElicitResult(
            action="accept", content={"decision": "allow_once" if harmless else "deny"}
        )

    command = "echo hello" + " " * 420 + "; touch tail.txt"
    result = await call(proj, "shell", {"command": command}, elicit=person)
    assert "⟨420 spaces⟩; touch tail.txt" in asked[0]
    assert result.is_error and not (proj / "tail.txt").exists()

    asked.clear()
    command = "echo hello" + " ;" * 3000 + " touch tail.txt"
    result = await call(proj, "shell", {"command": command}, elicit=person)
    assert asked == []  # too long to show whole: refused without a question
    assert result.is_error and "too long to show whole" in text_of(result)
    assert not (proj / "tail.txt").exists()


@pytest.fixture
def threads(proj: Path, tmp_path: Path) -> dict[str, str]:
    store = LocalThreadStore(LoomPaths.from_env())
    root = str(proj.resolve())
    private = {"is_private": True, "visibility": "private"}
    made = {
        "here": thread_with("zebra here", workspace_root=root),
        "subfolder": thread_with("zebra below", workspace_root=f"{root}/pkg"),
        "private": thread_with("zebra secret", workspace_root=root, **private),
        "flipped": thread_with("zebra flipped", workspace_root=root, **private),
        "elsewhere": thread_with("zebra elsewhere", workspace_root=str(tmp_path / "other")),
    }
    for thread in made.values():
        store.save(thread)
    flipped = store.path_for(made["flipped"].id)  # a file changed behind Loom's back
    data = json.loads(flipped.read_text())
    data.update(is_private=False, visibility="organization")
    flipped.write_text(json.dumps(data))
    store.close()
    return {name: thread.id for name, thread in made.items()}


async def test_thread_tools_see_only_this_projects_shareable_threads(
    proj: Path, threads: dict[str, str]
) -> None:
    from mcp import Client

    async with Client(serve_stdio_params(proj), mode="legacy") as client:
        found = json.loads(text_of(await client.call_tool("thread_search", {"query": "zebra"})))
        resources = (await client.list_resources()).resources
        shown, read = {}, {}
        for name, thread_id in threads.items():
            shown[name] = await client.call_tool("thread_show", {"id": thread_id})
            try:
                contents = (await client.read_resource(f"loom://threads/{thread_id}")).contents
                read[name] = "\n".join(getattr(part, "text", "") for part in contents)
            except Exception as exc:  # the SDK raises the server's error
                read[name] = f"refused: {exc}"
    assert {hit["id"] for hit in found} == {threads["here"], threads["subfolder"]}
    listed = {str(resource.uri).rsplit("/", 1)[-1] for resource in resources}
    assert listed == {threads["here"], threads["subfolder"]}
    assert not shown["here"].is_error and "zebra here" in text_of(shown["here"])
    assert "zebra here" in read["here"] and "zebra below" in read["subfolder"]
    for name in ("private", "flipped", "elsewhere"):
        assert shown[name].is_error and "no thread" in text_of(shown[name]), name
        assert "zebra" not in text_of(shown[name])
        assert read[name].startswith("refused:") and "no thread" in read[name], read[name]


async def test_include_private_shows_this_projects_private_threads_only(
    proj: Path, threads: dict[str, str]
) -> None:
    from mcp import Client

    async with Client(serve_stdio_params(proj, "--include-private"), mode="legacy") as client:
        found = json.loads(text_of(await client.call_tool("thread_search", {"query": "zebra"})))
        elsewhere = await client.call_tool("thread_show", {"id": threads["elsewhere"]})
    assert {hit["id"] for hit in found} == {
        threads[name] for name in ("here", "subfolder", "private", "flipped")
    }
    assert elsewhere.is_error
