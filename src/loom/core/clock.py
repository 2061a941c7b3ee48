"""Timestamps as the thread format writes them: ISO 8601, UTC, milliseconds, `Z`."""

from __future__ import annotations

import time
from datetime import UTC, datetime

_second: tuple[int, str] = (-1, "")  # the last second formatted, and how it reads


def now_iso() -> str:
    """The current time as `format_iso` writes it. A turn takes ~10 timestamps (each
    message, each save): the date and time of day are formatted once per second."""
    global _second
    second, nanos = divmod(time.time_ns(), 1_000_000_000)
    cached = _second
    if cached[0] != second:
        cached = _second = (second, time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second)))
    return f"{cached[1]}{nanos // 1_000_000:03d}Z"


def format_iso(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_iso(text: str) -> datetime:
    """Parse the timestamps we write and the common ISO 8601 forms others write."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


def humanize_age(moment: datetime | str, now: datetime | None = None) -> str:
    """'just now', '5 minutes ago', '2 hours ago', '3 days ago', or a date."""
    if isinstance(moment, str):
        moment = parse_iso(moment)
    now = now or datetime.now(UTC)
    seconds = int((now - moment).total_seconds())
    if seconds < 0:
        return "just now"
    for unit_seconds, unit in ((86400 * 30, None), (86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= unit_seconds:
            if unit is None:
                return moment.strftime("%Y-%m-%d")
            count = seconds // unit_seconds
            return f"{count} {unit}{'s' if count != 1 else ''} ago"
    return "just now"
