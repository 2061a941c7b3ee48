"""The ranked map: PageRank against networkx, golden maps of the fixture repo, budgets,
personalization and the map cache."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from loom.repointel.rank import FileGraph, definition_ranks, pagerank
from loom.repointel.repomap import local_estimate
from loom.repointel.service import RepoIntel
from loom.repointel.settings import RepoSettings
from tests.support.files import write
from tests.support.repointel import FIXTURES

GOLDEN = FIXTURES / "shop.golden"


def intel(root: Path, cache: Path) -> RepoIntel:
    return RepoIntel(root, RepoSettings(), cache_dir=cache)


def random_graph(seed: int) -> FileGraph:
    rng = random.Random(seed)
    n_files, n_idents = 30, 50
    defs = {(rng.randrange(n_idents), rng.randrange(n_files)) for _ in range(70)}
    refs = [
        (rng.randrange(n_files), rng.randrange(n_idents), rng.uniform(0.1, 5)) for _ in range(200)
    ]
    refs += [(f, i, 1.5) for i, f in list(defs)[:10]]  # files using their own names
    return FileGraph(
        n_files,
        n_idents,
        np.array([r[0] for r in refs]),
        np.array([r[1] for r in refs]),
        np.array([r[2] for r in refs]),
        np.array([d[0] for d in defs]),
        np.array([d[1] for d in defs]),
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_factored_pagerank_matches_networkx_on_the_explicit_graph(seed: int) -> None:
    graph = random_graph(seed)
    explicit = nx.DiGraph()
    explicit.add_nodes_from(range(graph.n_files))
    for (a, b), w in graph.edges().items():
        explicit.add_edge(a, b, weight=w)
    personal = np.ones(graph.n_files)
    personal[[1, 7]] = 20.0
    expected = nx.pagerank(explicit, personalization=dict(enumerate(personal)), weight="weight")
    ours = pagerank(graph, personal)
    assert ours == pytest.approx([expected[n] for n in range(graph.n_files)], abs=1e-5)

    # what flows to each definition = sum over its users' rank shares
    out = {
        n: sum(w for (a, _b), w in graph.edges().items() if a == n) for n in range(graph.n_files)
    }
    flows = definition_ranks(graph, ours, graph.def_file, graph.def_ident)
    for k, (ident, file) in enumerate(
        zip(graph.def_ident.tolist(), graph.def_file.tolist(), strict=True)
    ):
        want = sum(
            ours[r] / out[r] * w
            for r, i, w in zip(
                graph.ref_file.tolist(),
                graph.ref_ident.tolist(),
                graph.ref_weight.tolist(),
                strict=True,
            )
            if i == ident and r != file
        )
        assert flows[k] == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize(
    ("name", "budget", "focus", "mention"),
    [
        ("full", 4000, [], []),
        ("small", 120, [], []),
        ("focus-api", 120, ["shop/api.py"], []),
        ("mention-go", 120, [], ["summarizeSales"]),
    ],
)
def test_golden_maps_of_the_fixture_repo(
    shop: Path, tmp_path: Path, name: str, budget: int, focus: list[str], mention: list[str]
) -> None:
    text = intel(shop, tmp_path / "cache").repo_map(budget, focus, mention, local_estimate)
    golden = GOLDEN / f"{name}.txt"
    if os.environ.get("LOOM_UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text)
    assert text == golden.read_text()


def test_focus_file_is_left_out_and_what_it_uses_ranks_higher(shop: Path, tmp_path: Path) -> None:
    ri = intel(shop, tmp_path / "cache")
    plain = ri.repo_map(4000, estimate=local_estimate)
    focused = ri.repo_map(4000, ["shop/api.py"], estimate=local_estimate)
    assert "shop/api.py:" in plain and "shop/api.py:" not in focused
    files = [line for line in focused.splitlines() if line.endswith(":")]
    assert files.index("shop/cart.py:") < files.index("web/render.js:")


def test_mentioned_identifier_pulls_its_file_to_the_top(shop: Path, tmp_path: Path) -> None:
    text = intel(shop, tmp_path / "cache").repo_map(120, [], ["renderCart"], local_estimate)
    assert text.splitlines()[0] == "web/render.js:"
    assert "renderCart" in text


def test_map_fills_the_budget_to_within_ten_percent(tmp_path: Path) -> None:
    root = tmp_path / "big"
    for n in range(60):
        body = "\n".join(
            f"def helper_{n}_{k}(value):\n    return helper_{(n + 1) % 60}_{k}(value)"
            for k in range(8)
        )
        write(root, f"pkg/mod_{n}.py", body + "\n")
    ri = intel(root, tmp_path / "cache")
    for budget in (256, 1024, 4096):
        used = local_estimate(ri.repo_map(budget, estimate=local_estimate))
        assert 0.9 * budget <= used <= budget, (budget, used)


def test_unchanged_repo_answers_from_the_map_cache(
    shop: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = intel(shop, tmp_path / "cache").repo_map(500, estimate=local_estimate)
    from loom.repointel import service

    def fail(*_args, **_kwargs):
        raise AssertionError("ranked again although nothing changed")

    monkeypatch.setattr(service, "rank_definitions", fail)
    again = intel(shop, tmp_path / "cache")  # a new process would do the same
    assert again.repo_map(500, estimate=local_estimate) == first


def test_one_changed_file_updates_the_map(shop: Path, tmp_path: Path) -> None:
    ri = intel(shop, tmp_path / "cache")
    before = ri.repo_map(4000, estimate=local_estimate)
    assert "def refund_order" not in before
    with open(shop / "shop/pricing.py", "a") as handle:
        handle.write("\n\ndef refund_order(order: Order) -> int:\n    return 0\n")
    stats = ri.refresh()
    assert stats.changed == ["shop/pricing.py"] and stats.parsed == 1
    assert "def refund_order(order: Order) -> int:" in ri.repo_map(4000, estimate=local_estimate)


def test_symbol_search_by_name_and_prefix(shop: Path, tmp_path: Path) -> None:
    ri = intel(shop, tmp_path / "cache")
    exact = ri.symbol_search("Order", exact=True)
    assert [(h.path, h.line, h.kind) for h in exact] == [("shop/models.py", 21, "class")]
    prefix = {h.name for h in ri.symbol_search("order_")}
    assert prefix == {"order_subtotal_cents", "order_total_cents"}
    assert ri.symbol_search("nothing_like_this") == []


def test_is_member_matches_numpy_isin() -> None:
    from loom.repointel.rank import is_member

    rng = np.random.default_rng(3)
    for size in (0, 1, 7, 200):
        values, pool = rng.integers(0, 50, 300), rng.integers(0, 50, size)
        assert (is_member(values, pool) == np.isin(values, pool)).all()


def test_a_folder_without_source_maps_to_nothing_without_loading_numpy(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    write(root, "README.md", "# just notes\n")
    cache = str(tmp_path / "cache")
    code = (
        "import sys; from pathlib import Path;"
        "from loom.repointel.service import RepoIntel;"
        "from loom.repointel.settings import RepoSettings;"
        f"intel = RepoIntel(Path({str(root)!r}), RepoSettings(), cache_dir=Path({cache!r}));"
        "print(repr(intel.repo_map(1024)), 'numpy' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "'' False"
