"""The on-disk graph inputs: updated per changed file, equal to a rebuild, and only a
cache (corrupt or inconsistent files are recomputed, never fatal)."""

from __future__ import annotations

import marshal
import random
from pathlib import Path

import numpy as np
import pytest

from loom.repointel.graphcache import (
    GRAPH_FORMAT,
    GraphCache,
    GraphInputs,
    empty_inputs,
    graph_file_for,
    update_inputs,
)
from loom.repointel.repomap import fit_to_budget, local_estimate, rank_definitions
from loom.repointel.service import RepoIntel
from loom.repointel.settings import RepoSettings
from tests.support.files import write


def intel(root: Path, cache: Path) -> RepoIntel:
    return RepoIntel(root, RepoSettings(), cache_dir=cache)


def make_repo(root: Path, seed: int, n_files: int = 25) -> None:
    rng = random.Random(seed)
    for n in range(n_files):
        lines = []
        for k in range(rng.randrange(1, 5)):
            calls = "\n".join(
                f"    fetch_{rng.randrange(n_files)}_{rng.randrange(4)}(x)"
                for _ in range(rng.randrange(1, 4))
            )
            lines.append(f"def fetch_{n}_{k}(x):\n{calls}\n    return _private(x)\n")
        write(root, f"pkg/mod_{n}.py", "\n".join(lines))


def ranking(ranked) -> list[tuple[str, str, int]]:
    return [(r.path, r.definition.name, r.definition.line) for r in ranked]


def graph_inputs(ri: RepoIntel) -> GraphInputs:
    cache = GraphCache(graph_file_for(ri.index.cache.path))
    return cache.current(ri.index.source_digests(), ri.index.symbols_for)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_updated_inputs_rank_like_a_rebuild(tmp_path: Path, seed: int) -> None:
    root = tmp_path / "repo"
    make_repo(root, seed)
    ri = intel(root, tmp_path / "cache")
    ri.refresh()
    graph_inputs(ri)  # cached state before the edits
    write(root, "pkg/mod_3.py", "def fetch_3_0(x):\n    return fetch_7_1(fetch_7_1(x))\n")
    write(root, "pkg/extra.py", "def brand_new_name(x):\n    return fetch_3_0(x)\n")
    (root / "pkg/mod_5.py").unlink()
    ri.refresh()
    symbols = ri.index.symbols()
    updated = graph_inputs(ri)
    assert updated.paths == sorted(symbols)
    for focus, mentioned in (((), ()), (("pkg/mod_3.py",), ()), ((), ("fetch_7_1",))):
        expected = rank_definitions(symbols, focus, mentioned)
        got = rank_definitions(symbols, focus, mentioned, None, updated)
        assert ranking(got) == ranking(expected)
        assert [r.rank for r in got] == pytest.approx(
            [r.rank for r in expected], rel=1e-9, abs=1e-15
        )
        assert fit_to_budget(got, 300, local_estimate) == fit_to_budget(
            expected, 300, local_estimate
        )


def test_only_changed_files_are_read(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, 7)
    ri = intel(root, tmp_path / "cache")
    ri.refresh()
    graph_inputs(ri)
    write(root, "pkg/mod_2.py", "def fetch_2_0(x):\n    return x\n")
    ri.refresh()
    asked: list[list[str]] = []

    def symbols_for(paths: list[str]):
        asked.append(list(paths))
        return ri.index.symbols_for(paths)

    cache = GraphCache(graph_file_for(ri.index.cache.path))
    inputs = cache.current(ri.index.source_digests(), symbols_for)
    assert asked == [["pkg/mod_2.py"]]
    saved = cache.load()
    assert saved is not None
    assert (saved.paths, saved.digests) == (inputs.paths, inputs.digests)
    asked.clear()
    cache.current(ri.index.source_digests(), symbols_for)
    assert asked == []  # nothing changed: nothing read


def test_map_after_an_edit_equals_the_map_from_an_empty_cache(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, 11)
    ri = intel(root, tmp_path / "cache")
    ri.repo_map(400, estimate=local_estimate)
    write(root, "pkg/mod_4.py", "def totally_new_helper(x):\n    return fetch_1_0(x)\n")
    after_edit = intel(root, tmp_path / "cache").repo_map(400, estimate=local_estimate)
    fresh = intel(root, tmp_path / "other-cache").repo_map(400, estimate=local_estimate)
    assert after_edit == fresh
    ri.refresh()
    assert "totally_new_helper" in ri.index.symbols_for(["pkg/mod_4.py"])["pkg/mod_4.py"].names()
    cached = GraphCache(graph_file_for(ri.index.cache.path)).load()
    assert cached is not None and "totally_new_helper" in cached.idents


@pytest.mark.parametrize(
    "damage",
    [
        lambda blob: b"",
        lambda blob: b"not marshal at all \x00\xff",
        lambda blob: blob[: len(blob) // 2],
        lambda blob: marshal.dumps((GRAPH_FORMAT + 1, *marshal.loads(blob)[1:])),
        lambda blob: marshal.dumps("a string"),
        # well-formed but inconsistent: an identifier id past the end of the table
        lambda blob: marshal.dumps((*marshal.loads(blob)[:3], [], *marshal.loads(blob)[4:])),
        # lengths that do not add up
        lambda blob: marshal.dumps(
            (*marshal.loads(blob)[:5], np.zeros(1, dtype="<i4").tobytes(), *marshal.loads(blob)[6:])
        ),
        # one name weight too few
        lambda blob: marshal.dumps(
            (*marshal.loads(blob)[:4], marshal.loads(blob)[4][8:], *marshal.loads(blob)[5:])
        ),
    ],
)
def test_a_corrupt_graph_cache_is_recomputed(tmp_path: Path, damage) -> None:
    root = tmp_path / "repo"
    make_repo(root, 5)
    ri = intel(root, tmp_path / "cache")
    expected = ri.repo_map(400, estimate=local_estimate)
    path = graph_file_for(ri.index.cache.path)
    good = path.read_bytes()
    assert GraphCache(path).load() is not None
    path.write_bytes(damage(good))
    assert GraphCache(path).load() is None
    ri.index.cache._conn.execute("DELETE FROM maps")  # force a ranking, not a cached map
    assert intel(root, tmp_path / "cache").repo_map(400, estimate=local_estimate) == expected
    assert GraphCache(path).load() is not None  # rewritten


def test_an_unwritable_graph_cache_is_not_fatal(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, 6)
    ri = intel(root, tmp_path / "cache")
    path = graph_file_for(ri.index.cache.path)
    path.mkdir(parents=True)  # a directory where the file should be: cannot replace it
    expected = intel(root, tmp_path / "other").repo_map(400, estimate=local_estimate)
    assert ri.repo_map(400, estimate=local_estimate) == expected


def test_files_without_symbols_are_left_out(tmp_path: Path) -> None:
    inputs = update_inputs(empty_inputs(), {"a.py": "d1", "gone.py": "d2"}, lambda paths: {})
    assert inputs.paths == [] and len(inputs.def_lengths) == 0


def test_names_nobody_uses_any_more_are_dropped_eventually(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, 8)
    ri = intel(root, tmp_path / "cache")
    ri.refresh()
    inputs = graph_inputs(ri)
    path = graph_file_for(ri.index.cache.path)
    inputs.idents.extend(f"old_name_{n}" for n in range(5000))
    inputs.name_weights = np.concatenate((inputs.name_weights, np.ones(5000)))
    assert GraphInputs.decode(inputs.encode()).idents == inputs.idents  # a valid entry
    GraphCache(path).save(inputs)
    write(root, "pkg/mod_1.py", "def fetch_1_0(x):\n    return x\n")
    ri.refresh()
    compacted = graph_inputs(ri)
    assert not any(name.startswith("old_name_") for name in compacted.idents)
    symbols = ri.index.symbols()
    assert ranking(rank_definitions(symbols, (), (), None, compacted)) == ranking(
        rank_definitions(symbols)
    )
