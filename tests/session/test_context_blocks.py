"""Context blocks: sent when they change, kept in the history where they were sent, so
each request extends the one before; the model still sees the newest of every part."""

from __future__ import annotations

from loom.core.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from loom.session.runtime.context import BuiltContext, ContextWindow
from loom.session.runtime.context_blocks import (
    CONTEXT_HEADING,
    MAP_DRIFT,
    MAP_REFRESH_CALLS,
    map_drift,
    map_files,
)


def window(size: int = 200_000) -> ContextWindow:
    return ContextWindow(context_window=size, reserved_output=500, system_prompt="sys")


def repo_map(*files: str) -> str:
    return "".join(f"{name}:\n    1│def {name.split('.')[0]}():\n" for name in files)


def round_(n: int, size: int = 50) -> list[Message]:
    call = ToolCall(id=f"c{n}", tool_name="file_read", arguments_json={"path": f"m{n}.py"})
    return [
        AssistantMessage(content="", tool_calls=[call]),
        ToolMessage(tool_call_id=f"c{n}", tool_name="file_read", content=f"body {n} " * size),
    ]


def blocks_in(built: BuiltContext) -> list[str]:
    """The context blocks the model reads in this request, oldest first."""
    kept = [m.content for m in built.messages if m.content.startswith(CONTEXT_HEADING)]
    return kept + ([built.context] if built.context else [])


def newest(built: BuiltContext, heading: str) -> str:
    """The newest text of a part (by its heading) the model sees in this request."""
    found = [
        part for block in blocks_in(built) for part in block.split("\n\n# ") if heading in part
    ]
    return found[-1] if found else ""


def test_map_files_and_drift() -> None:
    assert map_files(repo_map("a.py", "b.py")) == {"a.py", "b.py"}
    assert map_files("some other shape\nof map") == {"some other shape", "of map"}
    assert map_drift(repo_map("a.py", "b.py"), repo_map("b.py", "a.py")) == 0
    assert map_drift(repo_map("a.py", "b.py"), repo_map("a.py", "c.py")) == 2 / 3
    assert map_drift(repo_map("a.py"), repo_map("b.py")) == 1


def test_an_unchanged_map_is_sent_once_and_stays_where_it_was_sent() -> None:
    ctx = window()
    conversation: list[Message] = [UserMessage(content="survey")]
    first = ctx.build(
        conversation, repo_map=repo_map("a.py", "b.py", "c.py", "e.py", "f.py", "g.py")
    )
    assert "# Repository map" in first.context and "def a()" in first.context
    before = built = first
    for n in range(4):
        conversation += round_(n)
        # re-ranked: the same files in another order, then one file of many swapped
        files = ["c.py", "b.py", "a.py"] if n % 2 else ["a.py", "b.py", "d.py"]
        built = ctx.build(conversation, repo_map=repo_map(*files, "e.py", "f.py", "g.py"))
        assert built.context == ""  # nothing changed enough: no block at all
        # the request extends the one before, its block kept as a message where it was sent
        expected = [*before.messages]
        if before.context:
            expected.append(UserMessage(content=before.context))
        assert built.messages[: len(expected)] == expected
        assert "def a()" in newest(built, "Repository map")  # the model still sees a map
        before = built
    kept = [m for m in built.messages if m.content.startswith(CONTEXT_HEADING)]
    assert len(kept) == 1 and built.messages[1] is kept[0]  # right after the question


def test_a_map_that_moved_is_sent_again_and_a_changed_one_after_some_answers() -> None:
    ctx = window()
    conversation: list[Message] = [UserMessage(content="survey")]
    ctx.build(conversation, repo_map=repo_map("a.py", "b.py", "c.py", "d.py"))
    conversation += round_(0)
    moved = repo_map("x.py", "y.py", "c.py", "d.py")
    assert map_drift(repo_map("a.py", "b.py", "c.py", "d.py"), moved) > MAP_DRIFT
    built = ctx.build(conversation, repo_map=moved)
    assert "def x()" in built.context
    # a small change waits, until MAP_REFRESH_CALLS answers came since the map shown
    slightly = repo_map("x.py", "y.py", "c.py", "z.py")
    for n in range(1, MAP_REFRESH_CALLS + 1):
        conversation += round_(n)
        built = ctx.build(conversation, repo_map=slightly)
        if n < MAP_REFRESH_CALLS:
            assert built.context == "" and "def z()" not in newest(built, "Repository map")
    assert "def z()" in built.context
    # a map that timed out (empty) leaves the last one shown as it was
    conversation += round_(99)
    built = ctx.build(conversation, repo_map="")
    assert built.context == "" and "def z()" in newest(built, "Repository map")


def test_decisions_and_news_are_sent_when_they_change_and_seen_until_then() -> None:
    ctx = window()
    conversation: list[Message] = [UserMessage(content="go")]
    built = ctx.build(conversation, decisions="# Decisions\n\nuse sqlite")
    assert "use sqlite" in built.context
    conversation += round_(0)
    built = ctx.build(conversation, decisions="# Decisions\n\nuse sqlite")
    assert built.context == "" and "use sqlite" in newest(built, "Decisions")
    conversation += round_(1)
    news = "# Since the session started\n\n- git: 1 file changed (new.py)"
    built = ctx.build(conversation, decisions="# Decisions\n\nuse sqlite", notes=news)
    assert "new.py" in built.context and "sqlite" not in built.context  # only what changed
    conversation += round_(2)
    built = ctx.build(conversation, decisions="# Decisions\n\nuse postgres", notes=news)
    assert "postgres" in built.context and "new.py" not in built.context
    assert "new.py" in newest(built, "Since the session")
    assert "postgres" in newest(built, "Decisions")


def test_a_call_made_again_sends_the_same_block() -> None:
    ctx = window()
    conversation: list[Message] = [UserMessage(content="go")]
    first = ctx.build(conversation, repo_map=repo_map("a.py"))
    again = ctx.build(conversation, repo_map=repo_map("a.py"))  # a retry: no answer came
    assert again.context == first.context and again.messages == first.messages


def test_a_cut_that_drops_the_block_with_the_map_sends_the_map_again() -> None:
    ctx = window(6_000)
    the_map = repo_map("a.py", "b.py")
    conversation: list[Message] = []
    cuts = 0
    for n in range(40):
        conversation += [UserMessage(content=f"question {n}"), *round_(n, size=120)]
        built = ctx.build(conversation, repo_map=the_map)
        # whatever was cut, the model sees the map: in the history or in this call's block
        assert "def a()" in newest(built, "Repository map"), n
        cuts += "earlier message(s)" in built.context
        sent = [m for m in built.messages if m.content.startswith(CONTEXT_HEADING)]
        assert all(m in blocks_in(built) for m in (s.content for s in sent))
    assert cuts >= 2  # the history was cut more than once, the map sent again each time


def test_one_long_turn_past_the_window_keeps_only_the_blocks_of_its_kept_rounds() -> None:
    ctx = window(5_000)
    the_map = repo_map("a.py", "b.py")
    conversation: list[Message] = [UserMessage(content="read everything")]
    trims = 0
    for n in range(40):
        built = ctx.build(conversation, repo_map=the_map)
        assert "def a()" in newest(built, "Repository map"), n  # always seen
        messages = built.messages
        if built.budget.omitted_messages:
            trims += 1
            # the question, then the newest rounds: a block sent before them went with
            # the rounds they followed (its place was cut anyway), never kept alone
            assert messages[0] is conversation[0]
            assert isinstance(messages[1], AssistantMessage)
        conversation += round_(n, size=120)
    assert trims > 10


def test_a_preview_changes_nothing_the_next_call_sends() -> None:
    """`/context` builds the next request to count it: the call after it sends what it
    would have sent had no one looked (its map, in its block), byte for byte."""
    looked, twin = window(), window()
    conversation: list[Message] = [UserMessage(content="survey")]
    for ctx in (looked, twin):
        ctx.build(conversation, repo_map=repo_map("a.py", "b.py"))
    conversation += round_(0)
    changed = repo_map("c.py", "d.py", "e.py")
    seen = looked.preview(conversation, repo_map=changed)
    assert "def c()" in seen.context  # the preview counts the block the call would send
    again = looked.preview(conversation, repo_map=changed)
    assert again.context == seen.context  # a second look is the same: nothing was recorded
    after, expected = (ctx.build(conversation, repo_map=changed) for ctx in (looked, twin))
    assert after.messages == expected.messages and after.context == expected.context
    assert "def c()" in after.context
