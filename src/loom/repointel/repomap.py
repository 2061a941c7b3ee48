"""The ranked repo map: which definitions matter, rendered to fit a token budget.

Files are linked referencer -> definer for every identifier one uses and the other
defines; personalized PageRank (files in the conversation and identifiers the user
mentioned weigh more) ranks the files, and each file's rank flows along its edges to the
definitions it points at. The best definitions are rendered as `path:` plus their source
lines with line numbers, as many as the budget allows.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from loom.repointel.rank import pagerank
from loom.repointel.tags import Definition, FileSymbols

Estimator = Callable[[str], int]
_PIECE = re.compile(r"[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")


def local_estimate(text: str) -> int:
    """Offline token estimate for code: words cost one token per ~4 chars, symbols one."""
    return sum((len(p) + 3) // 4 if p[0].isalnum() or p[0] == "_" else 1
               for p in _PIECE.findall(text))


def default_estimator() -> Estimator:
    try:
        from loom.llm.tokens import estimate_tokens  # the LLM layer's counter, when present
    except ImportError:
        return local_estimate
    return estimate_tokens


@dataclass(frozen=True)
class RankedDefinition:
    path: str
    definition: Definition
    rank: float


def _weight(ident: str, n_definers: int, mentioned: frozenset[str]) -> float:
    mul = 1.0
    descriptive = ("_" in ident.strip("_") or (ident.lower() != ident and ident.upper() != ident))
    if descriptive and len(ident) >= 8:
        mul *= 10  # specific names say more than `get` or `run`
    if ident.startswith("_"):
        mul *= 0.1
    if n_definers > 5:
        mul *= 0.1  # defined everywhere: says little about any one file
    if ident in mentioned:
        mul *= 10
    return mul


def rank_definitions(
    symbols: dict[str, FileSymbols],
    focus: Iterable[str] = (),
    mentioned: Iterable[str] = (),
) -> list[RankedDefinition]:
    focus_set, mentioned_set = frozenset(focus), frozenset(mentioned)
    defines: dict[str, list[str]] = defaultdict(list)
    for path, syms in symbols.items():
        for name in {d.name for d in syms.definitions}:
            defines[name].append(path)
    # (referencer, definer) -> total weight; and the identifiers behind each edge
    edges: dict[tuple[str, str], float] = defaultdict(float)
    behind: dict[tuple[str, str], list[tuple[str, float]]] = defaultdict(list)
    for referencer, syms in symbols.items():
        boost = 50.0 if referencer in focus_set else 1.0
        for ident, count in syms.references.items():
            definers = defines.get(ident)
            if not definers:
                continue
            w = boost * _weight(ident, len(definers), mentioned_set) * math.sqrt(count)
            for definer in definers:
                if definer == referencer:
                    continue  # a file using its own names says nothing about its importance
                edges[(referencer, definer)] += w
                behind[(referencer, definer)].append((ident, w))
    nodes = sorted(symbols)
    personal: dict[str, float] = {}
    for path in nodes:
        stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
        if path in focus_set or stem in mentioned_set:
            personal[path] = 1.0
    for ident in mentioned_set:
        for path in defines.get(ident, ()):
            personal[path] = personal.get(path, 0.0) + 1.0
    if personal:
        # Half the teleport mass goes to the personalized files, half spreads evenly, so
        # the rest of the repo keeps its own order instead of collapsing to zero.
        boost = len(nodes) / sum(personal.values())
        personal = {path: 1.0 + boost * personal.get(path, 0.0) for path in nodes}
    ranks = pagerank(edges, nodes, personal or None)

    out_total: dict[str, float] = defaultdict(float)
    for (src, _dst), w in edges.items():
        out_total[src] += w
    def_rank: dict[tuple[str, str], float] = defaultdict(float)
    for (src, dst), contributions in behind.items():
        share = ranks[src] / out_total[src]
        for ident, w in contributions:
            def_rank[(dst, ident)] += share * w
    # Files nobody references still show their definitions, ranked by their own weight.
    ranked: list[RankedDefinition] = []
    for path in nodes:
        if path in focus_set:
            continue  # already in the conversation
        for d in symbols[path].definitions:
            score = def_rank.get((path, d.name), 0.0) + ranks[path] * 1e-3
            if d.name in mentioned_set:
                score += 1.0  # named by the user: first, whoever else uses it
            ranked.append(RankedDefinition(path, d, score))
    ranked.sort(key=lambda r: (-r.rank, r.path, r.definition.line))
    return ranked


def render(entries: list[RankedDefinition]) -> str:
    by_file: dict[str, list[Definition]] = {}
    for entry in entries:
        by_file.setdefault(entry.path, []).append(entry.definition)
    parts: list[str] = []
    for path, defs in by_file.items():
        parts.append(f"{path}:")
        for d in sorted(defs, key=lambda d: d.line):
            parts.append(f"{d.line:>5}│{d.text}")
    return "\n".join(parts) + ("\n" if parts else "")


def fit_to_budget(ranked: list[RankedDefinition], budget: int,
                  estimate: Estimator | None = None) -> str:
    """The longest prefix of `ranked` whose rendering fits `budget` tokens."""
    estimate = estimate or default_estimator()
    if budget <= 0 or not ranked:
        return ""
    low, high = 0, len(ranked)  # invariant: render(ranked[:low]) fits
    if estimate(render(ranked)) <= budget:
        return render(ranked)
    while high - low > 1:
        middle = (low + high) // 2
        if estimate(render(ranked[:middle])) <= budget:
            low = middle
        else:
            high = middle
    return render(ranked[:low])
