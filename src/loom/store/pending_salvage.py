"""Reading the sync bookkeeping files when they hold garbage or wrong types.

`pending.json` (the queue) and `acked.json` (versions the server acknowledged) are
small JSON documents Loom writes atomically, but a disk error, a hand edit or another
program can still leave anything in them. Nothing in them may stop Loom or be dropped
silently: every thread id that can still be read is kept, the damaged copy is kept as
`<name>.damaged-<time>`, and a note says what was found (the syncing store re-queues
what was lost by comparing local threads with the acknowledged versions).
"""

from __future__ import annotations

import re
from typing import Any

_ID = re.compile(r"T-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
_ACK_PAIR = re.compile(rf'"({_ID.pattern})"\s*:\s*(\d{{1,15}})')
OPERATIONS = ("Upsert", "Delete")


class Salvage:
    """What was read from a damaged file: the usable document and what went wrong."""

    def __init__(self, data: dict[str, Any], problems: list[str]) -> None:
        self.data = data
        self.problems = problems


def ids_in(raw: bytes) -> list[str]:
    """Every thread id in the bytes, first occurrence order."""
    text = raw.decode("utf-8", "replace")
    return list(dict.fromkeys(_ID.findall(text)))


def salvage_queue(parsed: Any, raw: bytes) -> Salvage:
    """A usable queue document from whatever `pending.json` held.

    `parsed` is the JSON value (or None when the bytes are not JSON)."""
    problems: list[str] = []
    entries: list[dict[str, Any]] = []
    if not isinstance(parsed, dict):
        problems.append("not a JSON object" if parsed is not None else "not valid JSON")
        raw_entries: Any = []
    else:
        raw_entries = parsed.get("entries", [])
        if not isinstance(raw_entries, list):
            problems.append(f"entries is a {type(raw_entries).__name__}, not a list")
            raw_entries = []
    seen: set[str] = set()
    for raw_entry in raw_entries:
        entry = _entry(raw_entry)
        if entry is None:
            problems.append(f"an unreadable entry ({str(raw_entry)[:60]})")
            continue
        if entry.pop("_fixed", False):
            problems.append(f"wrong field types in the entry of {entry['thread_id']}")
        if entry["thread_id"] not in seen:
            seen.add(entry["thread_id"])
            entries.append(entry)
    # Ids anywhere else in the bytes (broken JSON, a broken entry): queued again.
    for thread_id in ids_in(raw) if problems else ():
        if thread_id not in seen:
            seen.add(thread_id)
            entries.append({"thread_id": thread_id, "operation": "Upsert", "seq": 0})
    stored = parsed.get("next_seq") if isinstance(parsed, dict) else None
    top = max((e["seq"] for e in entries), default=0) + 1
    if stored is not None and not _is_int(stored):
        problems.append(f"next_seq is {str(stored)[:30]!r}, not a number")
    next_seq: int = stored if isinstance(stored, int) and _is_int(stored) and stored >= top else top
    for entry in entries:
        if entry["seq"] <= 0:
            entry["seq"] = next_seq
            next_seq += 1
    return Salvage({"next_seq": next_seq, "entries": entries}, problems)


def _entry(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict) or not is_thread_id(str(raw.get("thread_id", ""))):
        return None
    fixed = False
    entry: dict[str, Any] = {"thread_id": raw["thread_id"]}
    operation = raw.get("operation")
    entry["operation"] = operation if operation in OPERATIONS else "Upsert"
    fixed |= operation not in OPERATIONS
    for key, kind, default in (
        ("seq", int, 0),
        ("retry_count", int, 0),
        ("enqueued_at", str, None),
        ("failed_at", str, None),
        ("last_error", str, None),
    ):
        value = raw.get(key, default)
        ok = _is_int(value) and value >= 0 if kind is int else isinstance(value, str | None)
        if not ok:
            fixed = True
            value = default
        if value is not None:
            entry[key] = value
    entry["_fixed"] = fixed
    return entry


def salvage_acked(parsed: Any, raw: bytes) -> Salvage:
    """{thread id: version} from whatever `acked.json` held."""
    problems: list[str] = []
    versions: dict[str, int] = {}
    if isinstance(parsed, dict):
        for key, value in parsed.items():
            if is_thread_id(str(key)) and _is_int(value) and value >= 0:
                versions[key] = value
            elif is_thread_id(str(key)) and isinstance(value, str) and value.isdigit():
                versions[key] = int(value)
            else:
                problems.append(f"{str(key)[:40]}: {str(value)[:30]!r}")
    else:
        problems.append("not a JSON object" if parsed is not None else "not valid JSON")
        text = raw.decode("utf-8", "replace")
        versions = {tid: int(v) for tid, v in _ACK_PAIR.findall(text)}
    return Salvage(dict(versions), problems)


def is_thread_id(value: str) -> bool:
    """A plausible thread id (`T-...`, one file name); the recovery scan of broken
    bytes looks for real `T-<uuidv7>` ids only."""
    return (
        value.startswith("T-")
        and 2 < len(value) <= 80
        and not any(ch in value for ch in "/\\\x00 \t\n")
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
