"""Personalized PageRank over the file graph.

The graph is built and reasoned about as a networkx-style weighted digraph (a file links
to the files defining the names it uses). The power iteration itself runs on numpy
arrays: networkx's own `pagerank` needs scipy and costs ~0.4 s to import and convert on a
Django-sized graph, which would spend the whole "one file changed" budget. The tests
check this function against `networkx.pagerank` on the same graphs.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping


def pagerank(
    edges: Mapping[tuple[Hashable, Hashable], float],
    nodes: list[Hashable],
    personalization: Mapping[Hashable, float] | None = None,
    alpha: float = 0.85,
    max_iter: int = 100,
    tol: float = 1.0e-6,
) -> dict[Hashable, float]:
    """Same definition as networkx.pagerank (weighted; dangling nodes follow the
    personalization vector)."""
    import numpy as np

    n = len(nodes)
    if n == 0:
        return {}
    index = {node: i for i, node in enumerate(nodes)}
    src = np.fromiter((index[s] for s, _ in edges), dtype=np.int64, count=len(edges))
    dst = np.fromiter((index[d] for _, d in edges), dtype=np.int64, count=len(edges))
    weight = np.fromiter(edges.values(), dtype=np.float64, count=len(edges))
    out_weight = np.bincount(src, weights=weight, minlength=n)
    share = weight / np.where(out_weight[src] == 0, 1.0, out_weight[src])

    p = np.ones(n)
    if personalization:
        p = np.array([float(personalization.get(node, 0.0)) for node in nodes])
        if p.sum() == 0:
            p = np.ones(n)
    p = p / p.sum()
    dangling = out_weight == 0
    x = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        last = x
        x = alpha * np.bincount(dst, weights=last[src] * share, minlength=n)
        x += (alpha * last[dangling].sum() + (1 - alpha)) * p
        if np.abs(x - last).sum() < n * tol:
            break
    return {node: float(x[i]) for i, node in enumerate(nodes)}
