from __future__ import annotations

from loom.store.search_text import fts_query, make_snippet, sortable_time, word_parts


def test_query_words_become_prefix_phrases() -> None:
    assert fts_query("login bug") == '"login"* "bug"*'
    assert fts_query('say "hi"') == '"say"* """hi"""*'
    assert fts_query("feature/auth") == '"feature/auth"*'
    assert fts_query("/// --") is None


def test_snippet_windows_around_the_first_hit_and_marks_every_hit() -> None:
    text = "word " * 100 + "the Login failed; login again " + "tail " * 100
    snippet = make_snippet(text, word_parts("login"))
    assert snippet.startswith("…") and snippet.endswith("…")
    assert "**Login**" in snippet and "**login**" in snippet
    assert len(snippet) < 200
    assert make_snippet("short text", ["zzz"]) == "short text"
    assert make_snippet("a feature/auth-12 b", word_parts("feature/auth")) == (
        "a **feature/auth-12** b"
    )


def test_other_iso_timestamps_sort_with_ours() -> None:
    assert sortable_time("2026-11-22T09:20:44.871Z") == "2026-11-22T09:20:44.871Z"
    assert sortable_time("2026-11-22T10:20:44+01:00") == "2026-11-22T09:20:44.000Z"
    assert sortable_time("not a time") == "not a time"
