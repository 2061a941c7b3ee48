"""Decision graph benchmarks: the context zone and the index, on a big project.

    .venv/bin/python bench/decisions_bench.py [--threads 1000] [--nodes 10000] [--runs 30]

1. Building the decision context zone (Active Goals, Recent Decisions, Prior Attempts &
   Lessons within [context] decision_tokens = 1024) for a project whose graph has
   `--nodes` nodes across `--threads` threads, from a fresh index: median and p90, next
   to the baseline of the naive way (load every thread file's graph with pydantic and
   sort in Python) in the same run.
2. Rebuilding the index from the thread files (first build, and a forced rebuild), and
   the no-change refresh every query pays (one stat of the threads folder).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from loom.core.decisions import DecisionEdge, DecisionLog, DecisionNode, NodeChange
from loom.core.thread import Thread
from loom.decisions.context import build_decision_context
from loom.decisions.index import DecisionIndex
from loom.store.serialize import thread_to_bytes

TYPES = ("goal", "decision", "option", "action", "outcome", "observation", "revisit")
WORDS = [
    "cache",
    "login",
    "search",
    "index",
    "parser",
    "retry",
    "token",
    "schema",
    "deploy",
    "metrics",
]


def make_corpus(folder: Path, threads: int, nodes: int, root: str) -> None:
    rng = random.Random(7)
    per_thread = max(1, nodes // threads)
    all_ids: list[str] = []
    for t in range(threads):
        thread = Thread.new(workspace_root=root)
        log = DecisionLog()
        for n in range(per_thread):
            node = DecisionNode(
                node_type=TYPES[(t + n) % len(TYPES)],
                title=f"{rng.choice(WORDS)} {rng.choice(WORDS)} step {t}.{n}",
                description=" ".join(rng.choice(WORDS) for _ in range(25)),
                confidence=rng.randint(20, 100),
                thread_id=thread.id,
                created_at=f"2026-11-{1 + (t % 28):02d}T10:{n % 60:02d}:00.000Z",
            )
            if log.nodes:
                log.edges.append(
                    DecisionEdge.model_validate(
                        {"from": log.nodes[-1].id, "to": node.id, "edge_type": "leads_to"}
                    )
                )
            log.nodes.append(node)
            all_ids.append(node.id)
        if all_ids and t % 5 == 0:
            log.changes.append(NodeChange(node_id=rng.choice(all_ids), status="superseded"))
        thread.decision_graph = log
        (folder / f"{thread.id}.json").write_bytes(thread_to_bytes(thread))


def naive_context(folder: Path, root: str) -> int:
    """What a store without an index would do: read every graph, filter, sort."""
    nodes: list[DecisionNode] = []
    for path in folder.glob("T-*.json"):
        thread = Thread.model_validate_json(path.read_bytes())
        if thread.workspace_root == root:
            nodes.extend(thread.decision_graph.nodes)
    goals = sorted((n for n in nodes if n.node_type == "goal"), key=lambda n: n.created_at)
    decisions = sorted((n for n in nodes if n.node_type == "decision"), key=lambda n: n.created_at)
    return len(goals[-12:]) + len(decisions[-12:])


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def describe(name: str, samples: list[float]) -> str:
    samples = sorted(samples)
    p90 = samples[int(len(samples) * 0.9) - 1] if len(samples) >= 10 else samples[-1]
    return f"{name:<44} median {statistics.median(samples):8.2f} ms   p90 {p90:8.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "threads"
        folder.mkdir()
        root = "/home/ana/proj"
        start = time.perf_counter()
        make_corpus(folder, args.threads, args.nodes, root)
        print(f"corpus: {args.nodes} nodes in {args.threads} threads "
              f"({time.perf_counter() - start:.1f} s to generate)")  # fmt: skip
        index = DecisionIndex.open(Path(tmp) / "loom.db")
        start = time.perf_counter()
        report = index.refresh(folder)
        first = (time.perf_counter() - start) * 1000
        print(f"{'first index build':<44} {first:8.0f} ms   ({report.files_read} files read)")
        rebuild = timed(lambda: index.rebuild(folder), 3)
        print(describe("forced rebuild from files (3 runs)", rebuild))
        print(describe("refresh with nothing changed", timed(lambda: index.refresh(folder), 200)))
        context = timed(lambda: build_decision_context(index, root, 1024), args.runs)
        print(describe("decision context zone (1024 tokens)", context))
        naive = timed(lambda: naive_context(folder, root), max(3, args.runs // 10))
        print(describe("baseline: load every graph with pydantic", naive))
        ratio = statistics.median(naive) / statistics.median(context)
        print(f"context zone is {ratio:.0f}x faster than the baseline (medians, same run)")
        text = build_decision_context(index, root, 1024)
        print(f"zone: {len(text.splitlines())} lines, {len(text)} chars")


if __name__ == "__main__":
    main()
