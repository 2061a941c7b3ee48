"""The ranking graph's inputs, kept on disk and updated per changed file.

Building the file graph from scratch means decoding every file's symbols from SQLite
and walking all their names (~0.15 s on Django). Ranking needs much less: per file, the
ids of the names it defines and of the names it uses (with counts). Those are kept here
as flat arrays, with each file's content digest; after an edit only the changed files'
symbols are read and their rows replaced. The graph built from this is the one
`repomap.build_graph` builds (same entries in the same file order; identifier ids may
differ, which no ranking depends on). The file is a cache: anything unreadable or
inconsistent is ignored and rebuilt from the symbols.
"""

from __future__ import annotations

import contextlib
import marshal
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loom.repointel.tags import FileSymbols

GRAPH_FORMAT = 2
_INT = "<i4"
_FLOAT = "<f8"


@dataclass
class GraphInputs:
    """Per file (sorted by path): defined name ids and used name ids with counts."""

    paths: list[str]
    digests: list[str]
    idents: list[str]  # every name defined or used anywhere (ids index this list)
    name_weights: Any  # float64, per name: `name_weight` below (a Python loop to redo)
    def_lengths: Any  # numpy int arrays, one entry per file
    def_ids: Any
    ref_lengths: Any
    ref_ids: Any
    ref_counts: Any  # float64

    def encode(self) -> bytes:
        return marshal.dumps(
            (
                GRAPH_FORMAT,
                self.paths,
                self.digests,
                self.idents,
                self.name_weights.astype(_FLOAT).tobytes(),
                *(
                    a.astype(_INT).tobytes()
                    for a in (self.def_lengths, self.def_ids, self.ref_lengths, self.ref_ids)
                ),
                self.ref_counts.astype(_FLOAT).tobytes(),
            )
        )

    @classmethod
    def decode(cls, blob: bytes) -> GraphInputs:
        """Raises ValueError (or EOFError/TypeError) for anything but a consistent entry."""
        import numpy as np

        fmt, *rest = marshal.loads(blob)
        if fmt != GRAPH_FORMAT:
            raise ValueError("other graph cache format")
        paths, digests, idents, nw, dl, di, rl, ri, rc = rest
        if not (isinstance(paths, list) and isinstance(digests, list) and isinstance(idents, list)):
            raise ValueError("not a graph cache entry")
        ints = [np.frombuffer(b, dtype=_INT).astype(np.int64) for b in (dl, di, rl, ri)]
        def_lengths, def_ids, ref_lengths, ref_ids = ints
        inputs = cls(
            paths,
            digests,
            idents,
            np.frombuffer(nw, dtype=_FLOAT),
            def_lengths,
            def_ids,
            ref_lengths,
            ref_ids,
            np.frombuffer(rc, dtype=_FLOAT),
        )
        n = len(paths)
        if (
            len(digests) != n
            or len(inputs.name_weights) != len(idents)
            or len(inputs.def_lengths) != n
            or len(inputs.ref_lengths) != n
            or int(inputs.def_lengths.sum()) != len(inputs.def_ids)
            or int(inputs.ref_lengths.sum()) != len(inputs.ref_ids)
            or len(inputs.ref_counts) != len(inputs.ref_ids)
            or (n and (inputs.def_lengths.min() < 0 or inputs.ref_lengths.min() < 0))
            or any(
                a.size and (a.min() < 0 or a.max() >= len(idents))
                for a in (inputs.def_ids, inputs.ref_ids)
            )
        ):
            raise ValueError("inconsistent graph cache entry")
        return inputs


def empty_inputs() -> GraphInputs:
    import numpy as np

    none = np.zeros(0, dtype=np.int64)
    return GraphInputs([], [], [], np.zeros(0), none, none, none, none, np.zeros(0))


def update_inputs(
    old: GraphInputs,
    current: Mapping[str, str],
    symbols_for: Callable[[list[str]], Mapping[str, FileSymbols]],
) -> GraphInputs:
    """Inputs for the files `current` ({path: digest}), reusing `old` rows whose digest
    still matches; `symbols_for(paths)` gives the symbols of the others (a file it has
    no symbols for is left out, as `RepoIndex.symbols()` leaves it out)."""
    import numpy as np

    old_row = {path: n for n, path in enumerate(old.paths)}
    stale = [p for p, d in current.items() if (n := old_row.get(p)) is None or old.digests[n] != d]
    fresh = symbols_for(sorted(stale)) if stale else {}
    idents = list(old.idents)
    ident_ids = {name: n for n, name in enumerate(idents)} if fresh else {}
    def_starts = np.concatenate(([0], np.cumsum(old.def_lengths)))
    ref_starts = np.concatenate(([0], np.cumsum(old.ref_lengths)))
    paths: list[str] = []
    digests: list[str] = []
    def_parts: list[Any] = []
    ref_parts: list[Any] = []
    count_parts: list[Any] = []
    length_parts: list[tuple[Any, Any]] = []
    run: list[int] = []  # consecutive old rows kept: copied as one slice

    def close_run() -> None:
        if run:
            first, last = run[0], run[-1] + 1
            def_parts.append(old.def_ids[def_starts[first] : def_starts[last]])
            ref_parts.append(old.ref_ids[ref_starts[first] : ref_starts[last]])
            count_parts.append(old.ref_counts[ref_starts[first] : ref_starts[last]])
            length_parts.append((old.def_lengths[first:last], old.ref_lengths[first:last]))
            run.clear()

    for path in sorted(current):
        symbols = fresh.get(path)
        if symbols is None:
            n = old_row.get(path)
            if n is None or old.digests[n] != current[path]:
                continue  # no symbols for it anywhere
            if run and run[-1] != n - 1:
                close_run()
            run.append(n)
        else:
            close_run()
            defs = [ident_ids.setdefault(name, len(ident_ids)) for name in symbols.names()]
            refs = [ident_ids.setdefault(name, len(ident_ids)) for name in symbols.references]
            def_parts.append(np.asarray(defs, dtype=np.int64))
            ref_parts.append(np.asarray(refs, dtype=np.int64))
            count_parts.append(np.asarray(list(symbols.references.values()), dtype=np.float64))
            length_parts.append((np.asarray([len(defs)]), np.asarray([len(refs)])))
        paths.append(path)
        digests.append(current[path])
    close_run()
    new_names = list(ident_ids)[len(idents) :]
    idents.extend(new_names)
    name_weights = np.concatenate(
        (old.name_weights, np.asarray([name_weight(n) for n in new_names], dtype=np.float64))
    )

    def joined(parts: list[Any], dtype: Any) -> Any:
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

    return GraphInputs(
        paths,
        digests,
        idents,
        name_weights,
        joined([d for d, _r in length_parts], np.int64),
        joined(def_parts, np.int64),
        joined([r for _d, r in length_parts], np.int64),
        joined(ref_parts, np.int64),
        joined(count_parts, np.float64),
    )


def graph_file_for(cache_path: Path) -> Path:
    """The graph inputs' file beside a project's SQLite cache."""
    return cache_path.with_name(cache_path.name + ".graph")


class GraphCache:
    """One project's graph inputs in a file next to its SQLite cache."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> GraphInputs | None:
        try:
            blob = self.path.read_bytes()
        except OSError:
            return None
        try:
            return GraphInputs.decode(blob)
        except (ValueError, EOFError, TypeError, IndexError):
            return None  # corrupt or from another version: rebuilt by the caller

    def save(self, inputs: GraphInputs) -> None:
        """Atomic replace; a failure only means the next run rebuilds."""
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_bytes(inputs.encode())
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()

    def current(
        self,
        files: Mapping[str, str],
        symbols_for: Callable[[list[str]], Mapping[str, FileSymbols]],
    ) -> GraphInputs:
        """Up-to-date inputs for `files` ({path: digest}), saved if anything changed."""
        old = self.load()
        inputs = update_inputs(old or empty_inputs(), files, symbols_for)
        if old is None or inputs.paths != old.paths or inputs.digests != old.digests:
            if old is not None and len(inputs.idents) > 2 * _used_idents(inputs) + 1000:
                # names nobody uses any more pile up over many edits: start afresh
                inputs = update_inputs(empty_inputs(), files, symbols_for)
            self.save(inputs)
        return inputs


def _used_idents(inputs: GraphInputs) -> int:
    import numpy as np

    ids = np.concatenate((inputs.def_ids, inputs.ref_ids))
    return int(np.count_nonzero(np.bincount(ids, minlength=len(inputs.idents))))


def name_weight(ident: str) -> float:
    """What a name alone says: specific names (long, snake or camel case) more than `get`
    or `run`, private (`_x`) names less. Depends on nothing else, so it is cached."""
    mul = 1.0
    if len(ident) >= 8 and (
        "_" in ident.strip("_") or (ident.lower() != ident and ident.upper() != ident)
    ):
        mul = 10.0
    if ident[0] == "_":
        mul *= 0.1
    return mul
