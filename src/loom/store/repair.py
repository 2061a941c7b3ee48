"""Writing back a thread file that `parse_thread_bytes` could repair (bad timestamps).

The original bytes stay in quarantine (`<name>.before-repair`) and the repaired
document replaces the file atomically, so the thread lists, opens and syncs again.
"""

from __future__ import annotations

import json
from pathlib import Path

from loom.store.atomic import StorageError, atomic_write_bytes
from loom.store.quarantine import keep_original
from loom.store.summary import IndexRecord


def write_repaired(path: Path, raw: bytes, record: IndexRecord, quarantine_dir: Path) -> bool:
    """Replace `path` by the repaired document; False (file untouched) if it cannot."""
    if record.repaired_data is None:
        return False
    why = "; ".join(record.repairs)
    if keep_original(path, raw, quarantine_dir, why) is None:
        return False  # no copy of the original: leave the file as it is
    try:
        data = json.dumps(record.repaired_data, indent=2, ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate: \u escapes keep it readable JSON
        data = json.dumps(record.repaired_data, indent=2).encode()
    try:
        atomic_write_bytes(path, data)
    except StorageError:
        return False
    return True
