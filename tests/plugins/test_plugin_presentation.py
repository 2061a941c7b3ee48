"""Adding a tool that edits files needs no face change: a plugin's `swap_word` tool
(tests/plugins/site, found through its entry point) says how its calls are shown, and the
REPL's lines, the approval prompt, the web page's cards and ACP's tool-call updates all
show it as an edit of its file, with the change as a diff."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from loom.acp import updates
from loom.cli.chat_render import EventRenderer
from loom.config import load_config
from loom.llm.scripted import ScriptedProvider, tool_turn
from loom.repointel.extractors import extractors, plugin_extensions
from loom.session import SessionSpec, Workspace, approval_view
from loom.web.cards import chat_items, disk_diff
from tests.support.plugins import SITE

SWAP = {"path": "notes.txt", "old": "one", "new": "two"}


@pytest.fixture
def with_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.syspath_prepend(str(SITE))
    yield
    # the repo index remembers the extractor plugins it found, once per process: forget
    # this path's, or a later test without plugins sees the test site's language
    extractors.cache_clear()
    plugin_extensions.cache_clear()


@pytest.mark.usefixtures("with_plugins")
async def test_a_plugin_tool_that_edits_files_is_shown_right_by_every_face(
    project: Path,
) -> None:
    provider = ScriptedProvider([tool_turn("swap_word", SWAP), "Swapped."])
    ws = Workspace(load_config(project), provider_factory=lambda model: provider)
    try:
        session = await ws.start_session(SessionSpec(model="openai:x", auto_approve=True))
        assert "swap_word" in session.tools
        # asked before it runs: the change as a diff, like file_edit's
        view = approval_view(session, "swap_word", SWAP)
        assert (view.title, view.body_kind) == ("Edit notes.txt", "diff")
        assert "-one" in view.body and "+two" in view.body
        web_diff = disk_diff(project, "swap_word", SWAP, session.tools)
        assert web_diff is not None and "two" in str(web_diff)

        out = io.StringIO()
        repl = EventRenderer(Console(file=out, width=200), project_root=project,
                             tools=session.tools)  # fmt: skip
        session.subscribe(repl.render)
        assert await session.send_message("swap it") == "Swapped."
        assert (project / "notes.txt").read_text() == "two\n"
    finally:
        await ws.shutdown()
    shown = out.getvalue()
    assert "● swap_word notes.txt" in shown  # its subject, as the REPL shows file_edit's
    assert "-one" in shown and "+two" in shown  # and the change it made, applied

    (card,) = next(item for item in chat_items(session.get_history(), tools=session.tools)
                   if item.tools).tools  # fmt: skip
    assert card.subject == "notes.txt" and card.status == "done"
    assert card.diff is not None and "two" in str(card.diff)

    started = next(u for u in updates.replay(session.get_history(), project, session.tools)
                   if getattr(u, "session_update", "") == "tool_call")  # fmt: skip
    assert (started.title, started.kind) == ("Swap words in notes.txt", "edit")
    assert [loc.path for loc in started.locations or []] == [str(project / "notes.txt")]


def test_a_thread_no_session_runs_shows_the_built_in_tools_as_before() -> None:
    """Without a session's tools (an old thread on the web page), the built-ins still
    present themselves; an unknown tool shows its name and subject."""
    from loom.session import present_call

    edit = present_call(None, "file_edit", {"path": "a.py", "old_string": "x", "new_string": "y"})
    assert (edit.title, edit.kind, edit.edits_files, edit.path) == ("Edit a.py", "edit", True,
                                                                    "a.py")  # fmt: skip
    assert edit.preview is not None and edit.preview.applied_to("x = 1\n") == "y = 1\n"
    other = present_call(None, "mcp__docs__lookup", {"query": "sqlite"})
    assert (other.title, other.kind, other.subject) == ("lookup (docs)", "other", "sqlite")
