"""The ranked repo map: which definitions matter, rendered to fit a token budget.

Files are linked referencer -> definer for every identifier one uses and the other
defines; personalized PageRank (files in the conversation and identifiers the user
mentioned weigh more) ranks the files, and each file's rank flows along its edges to the
definitions it points at. The best definitions are rendered as `path:` plus their source
lines with line numbers, as many as the budget allows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from loom.repointel.graphcache import GraphInputs, name_weight
from loom.repointel.rank import FileGraph, definition_ranks, pagerank
from loom.repointel.tags import Definition, FileSymbols

Estimator = Callable[[str], int]
_PIECE = re.compile(r"[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")


def local_estimate(text: str) -> int:
    """Offline token estimate for code: words cost one token per ~4 chars, symbols one."""
    return sum(
        (len(p) + 3) // 4 if p[0].isalnum() or p[0] == "_" else 1 for p in _PIECE.findall(text)
    )


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


def _ident_weights(name_weights: Any, n_definers: Any, mentioned: Any) -> Any:
    """How much a use of each identifier says: its name's weight, less for names defined
    in many files, more for names the user mentioned (arrays, one entry per name)."""
    import numpy as np

    weights = np.where(n_definers > 5, name_weights * 0.1, name_weights)
    return np.where(mentioned, weights * 10, weights)


def build_graph(
    symbols: Mapping[str, FileSymbols],
    focus: frozenset[str],
    mentioned: frozenset[str],
) -> tuple[FileGraph, list[str], list[str]]:
    """The factored file graph, its files (node order) and its identifiers."""
    import numpy as np

    nodes = sorted(symbols)
    ident_ids: dict[str, int] = {}
    def_ident: list[int] = []
    def_lengths: list[int] = []
    for path in nodes:
        names = symbols[path].names()
        def_lengths.append(len(names))
        def_ident.extend([ident_ids.setdefault(name, len(ident_ids)) for name in names])
    idents = list(ident_ids)
    ref_lengths = [len(symbols[path].references) for path in nodes]
    get = ident_ids.get
    ref_ident = np.fromiter(
        (get(name, -1) for path in nodes for name in symbols[path].references),
        dtype=np.int64,
        count=sum(ref_lengths),
    )
    counts = np.fromiter(
        (n for path in nodes for n in symbols[path].references.values()),
        dtype=np.float64,
        count=len(ref_ident),
    )
    graph = _graph(
        nodes,
        idents,
        np.asarray([name_weight(name) for name in idents]),
        np.asarray(def_lengths, dtype=np.int64),
        np.asarray(def_ident, dtype=np.int64),
        np.asarray(ref_lengths, dtype=np.int64),
        ref_ident,
        counts,
        focus,
        mentioned,
    )
    return graph, nodes, idents


def graph_from_inputs(
    inputs: GraphInputs,
    focus: frozenset[str],
    mentioned: frozenset[str],
) -> tuple[FileGraph, list[str], list[str]]:
    """The graph `build_graph` builds, from the cached per-file inputs (its identifier
    list also holds names nobody defines; uses of those are dropped here as there)."""
    graph = _graph(
        inputs.paths,
        inputs.idents,
        inputs.name_weights,
        inputs.def_lengths,
        inputs.def_ids,
        inputs.ref_lengths,
        inputs.ref_ids,
        inputs.ref_counts,
        focus,
        mentioned,
    )
    return graph, inputs.paths, inputs.idents


def _graph(
    nodes: list[str],
    idents: list[str],
    name_weights: Any,
    def_lengths: Any,
    def_ident: Any,
    ref_lengths: Any,
    ref_ident: Any,
    counts: Any,
    focus: frozenset[str],
    mentioned: frozenset[str],
) -> FileGraph:
    """Uses of names nobody defines (id -1 or no definer) link nowhere and are dropped."""
    import numpy as np

    files = np.arange(len(nodes), dtype=np.int64)
    def_file = np.repeat(files, def_lengths)
    n_definers = np.bincount(def_ident, minlength=len(idents))
    named = np.zeros(len(idents), dtype=bool)
    if mentioned:
        named[[n for n, name in enumerate(idents) if name in mentioned]] = True
    ident_weight = _ident_weights(name_weights, n_definers, named)
    ref_file = np.repeat(files, ref_lengths)
    known = ref_ident >= 0
    known[known] = n_definers[ref_ident[known]] > 0
    ref_file, ref_ident, counts = ref_file[known], ref_ident[known], counts[known]
    boost = np.ones(len(nodes))
    boost[[n for n, path in enumerate(nodes) if path in focus]] = 50.0
    ref_weight = boost[ref_file] * ident_weight[ref_ident] * np.sqrt(counts)
    return FileGraph(len(nodes), len(idents), ref_file, ref_ident, ref_weight, def_ident, def_file)


def rank_definitions(
    symbols: Mapping[str, FileSymbols],
    focus: Iterable[str] = (),
    mentioned: Iterable[str] = (),
    limit: int | None = None,
    inputs: GraphInputs | None = None,
) -> list[RankedDefinition]:
    """Definitions, best first (at most `limit` distinct names per file).

    With `inputs` (the cached graph inputs of the same files), the graph comes from them
    and `symbols` is only asked for the definitions of the files that rank (through its
    `fetch(paths)` when it has one).

    `focus` files are in the conversation already: the map ranks what they use and leaves
    their own definitions out. `mentioned` holds names and file names the person wrote;
    a mentioned file (full path or base name) ranks first and is never left out."""
    import numpy as np

    focus_set, mentioned_set = frozenset(focus), frozenset(mentioned)
    if inputs is None:
        graph, nodes, idents = build_graph(symbols, focus_set, mentioned_set)
    else:
        graph, nodes, idents = graph_from_inputs(inputs, focus_set, mentioned_set)
    if not nodes:
        return []
    personal = np.zeros(len(nodes))
    # A file named among the mentions (`src/calc.py` or just `calc.py`) ranks first.
    in_mentioned_file = np.zeros(len(nodes), dtype=bool)
    for file_no, path in enumerate(nodes):
        name = path.rsplit("/", 1)[-1]
        if path in mentioned_set or name in mentioned_set:
            in_mentioned_file[file_no] = True
        if path in focus_set or name.split(".", 1)[0] in mentioned_set:
            personal[file_no] = 1.0
    personal[in_mentioned_file] = 1.0
    ident_ids = {name: n for n, name in enumerate(idents) if name in mentioned_set}
    for name in ident_ids:
        personal[graph.def_file[graph.def_ident == ident_ids[name]]] += 1.0
    if personal.any():
        # Half the teleport mass goes to the personalized files, half spreads evenly, so
        # the rest of the repo keeps its own order instead of collapsing to zero.
        personal = 1.0 + personal * (len(nodes) / personal.sum())
    ranks = pagerank(graph, personal if personal.any() else None)
    scores = definition_ranks(graph, ranks, graph.def_file, graph.def_ident)
    # Files nobody references still show their definitions, ranked by their own weight.
    scores = scores + ranks[graph.def_file] * 1e-3
    if mentioned_set:
        named = np.fromiter(
            (idents[i] in mentioned_set for i in graph.def_ident.tolist()),
            dtype=bool,
            count=len(graph.def_ident),
        )
        scores = scores + named  # named by the user: first, whoever else uses it
        scores = scores + in_mentioned_file[graph.def_file]
    focus_ids = [n for n, path in enumerate(nodes) if path in focus_set]
    if focus_ids:
        in_focus = np.zeros(len(nodes), dtype=bool)
        in_focus[focus_ids] = True
        in_focus &= ~in_mentioned_file  # a mentioned file stays, even if already read
        scores[in_focus[graph.def_file]] = -1.0  # already in the conversation
    order = np.argsort(-scores, kind="stable")
    keep = order[scores[order] >= 0]
    if limit is not None:
        keep = keep[:limit]
    chosen: dict[tuple[str, str], float] = {}
    for entry in keep.tolist():
        chosen[(nodes[graph.def_file[entry]], idents[graph.def_ident[entry]])] = float(
            scores[entry]
        )
    paths = sorted({p for p, _ in chosen})
    fetch = getattr(symbols, "fetch", None)  # read on demand: one batch, not file by file
    table = symbols if fetch is None else fetch(paths)
    ranked = [
        RankedDefinition(path, d, chosen[(path, d.name)])
        for path in paths
        if path in table  # (gone since: nothing to show)
        for d in table[path].definitions
        if (path, d.name) in chosen
    ]
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


def fit_to_budget(
    ranked: list[RankedDefinition], budget: int, estimate: Estimator | None = None
) -> str:
    """The longest prefix of `ranked` whose rendering fits `budget` tokens."""
    estimate = estimate or default_estimator()
    if budget <= 0 or not ranked:
        return ""
    # Line costs add up to about the whole text's cost: find roughly where the budget
    # ends, then binary-search exactly with real renderings of the short prefixes.
    high, spent, seen = len(ranked), 0, set()
    for n, entry in enumerate(ranked):
        if entry.path not in seen:
            seen.add(entry.path)
            spent += estimate(entry.path + ":\n")
        spent += estimate(f"{entry.definition.line:>5}│{entry.definition.text}\n")
        if spent > budget * 1.25:
            high = n + 1
            break
    if high == len(ranked) and estimate(render(ranked)) <= budget:
        return render(ranked)
    low = 0  # invariant: render(ranked[:low]) fits, render(ranked[:high]) does not
    if estimate(render(ranked[:high])) <= budget:
        low, high = high, len(ranked)
    while high - low > 1:
        middle = (low + high) // 2
        if estimate(render(ranked[:middle])) <= budget:
            low = middle
        else:
            high = middle
    return render(ranked[:low])
