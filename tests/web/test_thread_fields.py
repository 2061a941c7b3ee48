"""The Changes tab of a thread whose file says its starting commit is a git option
(issue 20, route 3): the thread is quarantined on load and git never sees the value."""

from __future__ import annotations

from pathlib import Path

from tests.support.threads import plant_thread
from tests.support.web import WebServer, authed


def test_changes_of_a_thread_with_an_option_for_a_commit_write_nothing(
    web: WebServer, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"  # no folder the project or Loom writes to
    outside.mkdir()
    marker = outside / "bashrc"
    thread_id = plant_thread(git_initial_commit_sha=f"--output={marker}")
    with authed(web, origin=web.base) as browser:
        changes = browser.get(f"/api/threads/{thread_id}/changes")
        assert changes.status_code == 404, changes.text
        assert "is not a commit id" in changes.text and "quarantine" in changes.text
        again = browser.get(f"/api/threads/{thread_id}/changes")
        assert again.status_code == 404
    assert not marker.exists()
    assert (web.home / "data" / "quarantine" / f"{thread_id}.json").exists()
    assert not (web.home / "data" / "threads" / f"{thread_id}.json").exists()
