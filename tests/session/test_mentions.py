"""@-mentions: files, ranges and folders attached; bad paths refused before sending."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loom.session.runtime.mentions import MentionError, expand_mentions, find_mentions
from loom.session.runtime.repo_map import focus_of
from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.loom_cli import loom_in_process


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("".join(f"line {n}\n" for n in range(1, 51)))
    (root / "README").write_text("read me\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    return root


def test_file_range_and_folder_are_attached(root: Path) -> None:
    from loom.core.messages import UserMessage, for_model

    said = "look at @src/app.py:10-12, @README and @src."
    out = expand_mentions(said, root)
    assert out.text == said  # the person's words alone: the contents are attachments
    assert [(a.kind, a.label) for a in out.attachments] == [
        ("file", "src/app.py:10-12"), ("file", "README"), ("listing", "src/"),
    ]  # fmt: skip
    sent = for_model(UserMessage(content=out.text, attachments=out.attachments)).content
    assert sent.startswith(said + "\n\n")  # the model reads them after the words, as before
    assert '<file path="src/app.py" lines="10-12">\nline 10\nline 11\nline 12\n</file>' in sent
    assert '<file path="README">\nread me\n</file>' in sent
    assert '<directory path="src">\napp.py\n</directory>' in sent
    assert out.files == ["src/app.py", "README", "src"]


def test_prose_at_signs_stay_text(root: Path) -> None:
    text = "use @property, mail me at ana@example.com, ping @here, add @types/node"
    assert find_mentions(text, root) == []
    assert expand_mentions(text, root).text == text


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("fix @src/missing.py", "no such file"),
        ("list @src/nothing", "no such file"),
        ("read @../secret.txt", "outside the project"),
        ("see @src/app.py:60-70", "has 50 lines"),
        ("see @src/app.py:9-3", "first-last"),
    ],
)
def test_bad_mentions_are_clear_errors(root: Path, text: str, problem: str) -> None:
    with pytest.raises(MentionError, match=problem):
        expand_mentions(text, root)


def test_a_symlink_out_of_the_project_is_refused(root: Path) -> None:
    (root / "link.txt").symlink_to(root.parent / "secret.txt")
    with pytest.raises(MentionError, match="outside the project"):
        expand_mentions("@link.txt", root)


def test_mentioned_files_lead_the_repo_map_focus(root: Path) -> None:
    from loom.core.messages import UserMessage

    out = expand_mentions("why does @src/app.py call parse_config", root)
    message = UserMessage.model_validate({"content": out.text, "mentions": out.files})
    files, mentions = focus_of([message])
    # a named file is a mention (ranked first, never dropped as "already seen")
    assert files == []
    assert mentions == ["src/app.py", "parse_config"]  # not the attached file's words


def test_loom_run_attaches_and_refuses_before_sending(server: FakeLlmServer, root: Path) -> None:
    server.add(Turn(text="It counts lines."))
    done = loom_in_process(["run", "-p", "explain @src/app.py:2-3", "-o", "json"], root, server)
    assert done.returncode == 0, done.stderr
    sent = json.dumps(server.requests[0].json["messages"])
    assert "line 2\\nline 3" in sent and "line 4" not in sent
    thread_id = json.loads(done.stdout)["thread_id"]
    import os

    saved = Path(os.environ["LOOM_HOME"]) / "data" / "threads" / f"{thread_id}.json"
    first = json.loads(saved.read_text())["conversation"]["messages"][0]
    assert first["mentions"] == ["src/app.py"]

    refused = loom_in_process(["run", "-p", "explain @src/nope.py"], root, server)
    assert refused.returncode == 1
    assert "@src/nope.py: no such file" in refused.stderr
    assert len(server.requests) == 1  # nothing was sent for it


@pytest.mark.parametrize(
    "text",
    ["please look up item-7 and check it.", "what does compute(alpha, beta) return?", ""],
)
def test_a_message_that_names_no_file_needs_no_scan(root: Path, text: str) -> None:
    from loom.session.runtime.mentions import may_name_files

    assert not may_name_files(text)
    out = expand_mentions(text, root)  # what the skipped scan would have said
    assert (out.text, out.files, out.images) == (text, [], [])


@pytest.mark.parametrize(
    "text", ["see @README", "/tmp/shot.png", "~/shot.png", "file:///tmp/shot.png"]
)
def test_a_message_that_may_name_a_file_is_scanned(text: str) -> None:
    from loom.session.runtime.mentions import may_name_files

    assert may_name_files(text)


async def test_a_turn_without_a_path_skips_the_mention_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loom.llm.scripted import ScriptedProvider, ScriptedTurn
    from loom.session.runtime import session as session_module
    from tests.support.sessions import ANY_MODEL, NoopTool, make_workspace, only

    scans: list[str] = []
    real = session_module.expand_mentions

    def counting(text: str, root: Path) -> object:
        scans.append(text)
        return real(text, root)

    monkeypatch.setattr(session_module, "expand_mentions", counting)
    provider = ScriptedProvider([ScriptedTurn(text="one"), ScriptedTurn(text="two")])
    ws = make_workspace(tmp_path, provider)
    session = await ws.start_session(only(NoopTool(), model=ANY_MODEL))
    assert await session.send_message("check item 7") == "one"
    assert await session.send_message("now @README") == "two"
    assert scans == ["now @README"]  # before: both messages, each on a worker thread
    await ws.shutdown()
