"""core.merge: properties of merging two copies of a thread."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from loom.core.merge import MergeKind, merge_threads, message_key
from loom.core.messages import AssistantMessage, UserMessage
from loom.core.thread import Thread

texts = st.lists(st.text(min_size=0, max_size=8), max_size=6)


def fork(base: list[str], ours: list[str], theirs: list[str]) -> tuple[Thread, Thread]:
    root = Thread.new()
    for text in base:
        root.append(UserMessage(content=text))
    root.touch()
    local, remote = root.model_copy(deep=True), root.model_copy(deep=True)
    for text in ours:
        local.append(AssistantMessage(content=f"ours {text}"))
        local.touch()
    for text in theirs:
        remote.append(UserMessage(content=f"theirs {text}"))
        remote.touch()
    return local, remote


def keys(thread: Thread) -> list[str]:
    return [message_key(m) for m in thread.messages]


@settings(max_examples=200, deadline=None)
@given(texts, texts, texts)
def test_no_message_is_lost_and_order_is_kept(base, ours, theirs) -> None:
    local, remote = fork(base, ours, theirs)
    result = merge_threads(local, remote)
    merged = keys(result.thread)
    # The server's history is a prefix (it never has to rewrite what it stored).
    assert merged[: len(remote.messages)] == keys(remote)
    # Every one of our messages is there, in our order, after the shared prefix.
    tail = merged[len(remote.messages) :]
    assert tail == keys(local)[len(base) :]
    assert result.thread.version > max(local.version, remote.version) or result.same_as_remote


@settings(max_examples=100, deadline=None)
@given(texts, texts)
def test_prefix_fast_forwards(base, extra) -> None:
    local, remote = fork(base, [], extra)
    result = merge_threads(local, remote)
    assert keys(result.thread) == keys(remote)
    assert result.report.kind in (MergeKind.TAKE_REMOTE, MergeKind.IDENTICAL)
    assert not result.report.diverged


def test_divergent_tails_are_both_kept_and_reported() -> None:
    local, remote = fork(["start"], ["a", "b"], ["c"])
    result = merge_threads(local, remote)
    assert result.report.kind is MergeKind.DIVERGED
    assert (result.report.common_prefix, result.report.local_only, result.report.remote_only) == (
        1,
        2,
        1,
    )
    assert [m.content for m in result.thread.messages] == ["start", "theirs c", "ours a", "ours b"]
    assert "two machines" in result.report.describe(local.id)
    assert not result.same_as_remote


def test_merging_again_after_a_merge_does_not_duplicate() -> None:
    local, remote = fork(["start"], ["a"], ["c"])
    first = merge_threads(local, remote).thread  # server now has start, c, a
    local.append(UserMessage(content="later"))  # our stale copy grew meanwhile
    local.touch()
    second = merge_threads(local, first)
    assert [m.content for m in second.thread.messages] == ["start", "theirs c", "ours a", "later"]


def test_identical_copies_need_no_push() -> None:
    local, remote = fork(["x"], [], [])
    result = merge_threads(local, remote)
    assert result.same_as_remote and result.report.kind is MergeKind.IDENTICAL


def test_lists_are_unioned_and_newer_fields_win() -> None:
    local, remote = fork(["x"], ["y"], [])
    local.git_commits = ["a1", "b2"]
    remote.git_commits = ["a1", "c3"]
    local.metadata.tags = ["bug"]
    remote.metadata.tags = ["auth"]
    remote.updated_at = "2000-01-01T00:00:00.000Z"
    local.git_branch = "feature"
    result = merge_threads(local, remote).thread
    assert result.git_commits == ["a1", "c3", "b2"]
    assert result.metadata.tags == ["auth", "bug"]
    assert result.git_branch == "feature"
