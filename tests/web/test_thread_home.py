"""`loom web` started in folder B (trusted) and a thread made in project A (issue 34,
item 7): the page runs B's threads only. A's thread is listed and read with A's name
beside it; resuming it here is refused with one line saying where to run it, so B's
hooks, auto_approve and trust banner never govern a session working in A."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.git import init_repo
from tests.support.loom_cli import loom
from tests.support.web import WebServer, authed, loom_run, start_web, stop_web


@pytest.fixture
def web_in_b(
    project: Path, server: FakeLlmServer, loom_home: Path, tmp_path: Path
) -> Iterator[WebServer]:
    b = init_repo(tmp_path / "b-side", {"README.md": "b\n"})
    (b / ".loom.toml").write_text(
        '[permissions]\nauto_approve = ["shell"]\n'
        f'[[hooks.SessionStart]]\ncommand = "echo ran >> {tmp_path / "B_HOOK_RAN"}"\n'
    )
    assert loom(["trust", "--yes"], b, server).returncode == 0
    running = start_web(b, server, loom_home)
    yield running
    stop_web(running)


def test_another_projects_thread_is_shown_as_its_and_resumes_only_there(
    web_in_b: WebServer, server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    server.add(Turn(text="hello from A"))
    thread_id = loom_run(project, server, "start in A")
    with authed(web_in_b, origin=web_in_b.base) as page:
        assert f'data-thread="{thread_id}"' not in page.get("/api/threads").json()["html"]
        listed = page.get("/api/threads?all=1").json()["html"]
        assert f'data-thread="{thread_id}"' in listed
        assert f'title="Works in {project}: resume it there">in {project.name}<' in listed

        read = page.get(f"/s/{thread_id}").text
        assert f"This thread works in the project <strong>{project.name}</strong>" in read
        assert f"cd {project} &amp;&amp; loom web" in read and 'id="resume"' not in read

        asked = len(server.requests)
        refused = page.post(f"/api/threads/{thread_id}/resume")
        assert refused.status_code == 409
        assert refused.json()["error"].startswith(
            f"thread {thread_id} belongs to the project {project}, not this one "
            f"({web_in_b.project}); continue it there: cd {project} && loom resume {thread_id}"
        )
    assert not (tmp_path / "B_HOOK_RAN").exists() and len(server.requests) == asked
