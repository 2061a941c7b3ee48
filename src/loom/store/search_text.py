"""Text helpers for the thread index: the FTS5 query for a person's words, the
highlighted snippet shown with a hit, and sortable timestamps. Standard library only,
and no `re` (its import costs more than a search takes)."""

from __future__ import annotations

HIGHLIGHT = ("**", "**")
SNIPPET_CHARS = 140
SNIPPET_SCAN = 100_000


def fts_query(text: str) -> str | None:
    """A user's words as an FTS5 query: each word a quoted phrase matched as a prefix.

    Prefix matching finds commit SHAs by their first characters and `auth` in
    `authentication`, close to seed 002's substring search. Punctuation inside a word
    (`feature/auth`, `github.com/ana/proj`) makes it a phrase of its parts.
    """
    parts = []
    for word in text.split():
        if not any(ch.isalnum() for ch in word):
            continue
        parts.append('"' + word.replace('"', '""') + '"*')
    return " ".join(parts) or None


def word_parts(text: str) -> list[str]:
    """Lower-cased runs of letters/digits (`feature/auth-12` -> feature, auth, 12).

    Plain string methods, not `re`: importing re costs more than a search takes."""
    cleaned = "".join(ch if ch.isalnum() else " " for ch in text.lower())
    return cleaned.split()


def make_snippet(text: str, terms: list[str], width: int = SNIPPET_CHARS) -> str:
    """A one-line window of `text` around the first word that starts with a term, with
    every such word marked **like this** (words are whitespace-separated tokens). Only
    the first SNIPPET_SCAN characters are looked at, whatever the message's size."""
    words = text[:SNIPPET_SCAN].split()
    prefixes = tuple(terms)
    hit = [
        any(t in w.lower() for t in terms)  # cheap test first, exact one only if it passes
        and any(p.startswith(prefixes) for p in word_parts(w))
        for w in words
    ]
    first = hit.index(True) if True in hit else 0
    # Start a few words before the first hit, then take words until the width is used.
    start = first
    used = len(words[first]) if words else 0
    while start > 0 and used + len(words[start - 1]) + 1 <= width // 3:
        start -= 1
        used += len(words[start]) + 1
    end = start
    used = 0
    while end < len(words) and used + len(words[end]) <= width:
        used += len(words[end]) + 1
        end += 1
    end = max(end, min(first + 1, len(words)))
    shown = [
        f"{HIGHLIGHT[0]}{w}{HIGHLIGHT[1]}" if hit[i] else w
        for i, w in enumerate(words[start:end], start)
    ]
    return ("…" if start > 0 else "") + " ".join(shown) + ("…" if end < len(words) else "")


def sortable_time(text: str) -> str:
    """Timestamps in our own format sort as text; normalise any other ISO 8601 form."""
    if len(text) == 24 and text.endswith("Z") and text[10] == "T":
        return text
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
