"""The on-disk cache of one project: file records, symbols, rendered maps.

One SQLite file per project under `LoomPaths.cache/repointel/` in WAL mode, so several
Loom processes can read and write it at once. Symbols are keyed by path + content hash.
Everything here is a cache: a corrupt database is moved aside and rebuilt, a corrupt
entry is dropped and recomputed, a locked database means "don't cache this time".
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from loom.repointel.tags import FileSymbols, decode_symbols

SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
  path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, language TEXT, digest TEXT,
  racy INTEGER, error TEXT, n_defs INTEGER);
CREATE TABLE IF NOT EXISTS symbols (
  path TEXT, digest TEXT, data BLOB, PRIMARY KEY (path, digest));
CREATE TABLE IF NOT EXISTS maps (key TEXT PRIMARY KEY, text TEXT, used REAL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
"""
MAPS_KEPT = 32
FEW_PATHS = 500  # symbols of at most this many files are looked up by path


class FileRecord(NamedTuple):
    size: int
    mtime_ns: int
    language: str | None
    digest: str
    racy: bool = False
    error: str | None = None
    n_defs: int = 0  # definitions found (for summaries that should not load symbols)


def cache_file_for(cache_dir: Path, project_root: Path) -> Path:
    key = hashlib.blake2b(str(project_root).encode(), digest_size=8).hexdigest()
    return cache_dir / "repointel" / f"{project_root.name or 'root'}-{key}.sqlite"


class RepoCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem: str | None = None
        self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            # Not a database (or damaged): keep it for inspection, start a fresh one.
            aside = self.path.with_suffix(f".corrupt-{int(time.time())}")
            with contextlib.suppress(OSError):
                os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.unlink(str(self.path) + suffix)
            self.problem = f"the repo cache {self.path} was unreadable ({exc}); rebuilt it"
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=10000")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            drops = "".join(
                f"DROP TABLE IF EXISTS {t};" for t in ("files", "symbols", "maps", "meta")
            )
            conn.executescript(
                f"BEGIN IMMEDIATE;{drops}{_SCHEMA}PRAGMA user_version={SCHEMA_VERSION};COMMIT;"
            )
        return conn

    def close(self) -> None:
        self._conn.close()

    # -- files -------------------------------------------------------------------------
    def load_files(self) -> dict[str, FileRecord]:
        rows = self._conn.execute(
            "SELECT path, size, mtime_ns, language, digest, racy, error, n_defs FROM files"
        )
        return {
            p: FileRecord(s, m, lang, d, bool(r), e, n or 0) for p, s, m, lang, d, r, e, n in rows
        }

    def save(
        self,
        records: dict[str, FileRecord],
        removed: Iterable[str],
        symbols: dict[str, tuple[str, bytes]],
        fingerprint: str,
    ) -> bool:
        """Write changed file records and symbols in one transaction. False: locked."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return False
        try:
            self._conn.executemany("DELETE FROM files WHERE path = ?", ((p,) for p in removed))
            self._conn.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    (p, r.size, r.mtime_ns, r.language, r.digest, int(r.racy), r.error, r.n_defs)
                    for p, r in records.items()
                ),
            )
            self._conn.executemany(
                "INSERT OR REPLACE INTO symbols VALUES (?, ?, ?)",
                ((p, d, blob) for p, (d, blob) in symbols.items()),
            )
            self._conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (fingerprint,)
            )
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        return True

    def drop_stale_symbols(self) -> None:
        """Symbols of content no file has any more (run now and then, not on every save)."""
        with contextlib.suppress(sqlite3.OperationalError):
            self._conn.execute(
                "DELETE FROM symbols WHERE NOT EXISTS (SELECT 1 FROM files f WHERE "
                "f.path = symbols.path AND f.digest = symbols.digest)"
            )

    def fingerprint(self) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        return row[0] if row else None

    # -- symbols -----------------------------------------------------------------------
    def load_symbols(self, wanted: dict[str, str]) -> dict[str, FileSymbols]:
        """Symbols for {path: digest}; missing or corrupt entries are simply absent."""
        found: dict[str, FileSymbols] = {}
        corrupt: list[tuple[str, str]] = []
        if len(wanted) > FEW_PATHS:
            rows: Iterable[tuple[str, str, bytes]] = self._conn.execute(
                "SELECT path, digest, data FROM symbols"
            )
        else:  # after an edit: a handful of files, not the whole table
            rows = self._conn.execute(
                "SELECT path, digest, data FROM symbols WHERE path IN "
                f"({','.join('?' * len(wanted))})",
                list(wanted),
            ).fetchall()
        for path, digest, blob in rows:
            if wanted.get(path) != digest:
                continue
            try:
                found[path] = decode_symbols(blob)
            except (ValueError, EOFError, TypeError, KeyError):
                corrupt.append((path, digest))
        if corrupt:
            with contextlib.suppress(sqlite3.OperationalError):
                self._conn.executemany("DELETE FROM symbols WHERE path = ? AND digest = ?", corrupt)
        return found

    # -- rendered maps -----------------------------------------------------------------
    def get_map(self, key: str) -> str | None:
        row = self._conn.execute("SELECT text FROM maps WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put_map(self, key: str, text: str) -> None:
        with contextlib.suppress(sqlite3.OperationalError):
            self._conn.execute(
                "INSERT OR REPLACE INTO maps VALUES (?, ?, ?)", (key, text, time.time())
            )
            self._conn.execute(
                "DELETE FROM maps WHERE key NOT IN "
                "(SELECT key FROM maps ORDER BY used DESC LIMIT ?)",
                (MAPS_KEPT,),
            )
