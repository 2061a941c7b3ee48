"""The graph in the thread file: round trip, old schema, merge, server search text."""

from __future__ import annotations

import json
from pathlib import Path

from loom.core.decisions import DecisionEdge, DecisionLog, DecisionNode, NodeChange
from loom.core.merge import merge_threads
from loom.core.thread import Thread
from loom.server.rows import search_text
from loom.store.serialize import thread_to_bytes

FIXTURES = Path(__file__).parent.parent / "fixtures" / "threads"


def graph_thread() -> Thread:
    thread = Thread.new(workspace_root="/p")
    goal = DecisionNode(node_type="goal", title="Fast search", thread_id=thread.id)
    action = DecisionNode(node_type="action", title="Add trigram index", thread_id=thread.id)
    thread.decision_graph = DecisionLog(
        nodes=[goal, action],
        edges=[DecisionEdge.model_validate({"from": goal.id, "to": action.id,
                                            "edge_type": "leads_to"})],
        changes=[NodeChange(node_id=goal.id, confidence=40)],
    )  # fmt: skip
    return thread


def test_round_trip_keeps_every_field_and_writes_from_and_to() -> None:
    thread = graph_thread()
    data = json.loads(thread_to_bytes(thread))
    assert data["decision_graph"]["edges"][0]["from"] == thread.decision_graph.nodes[0].id
    again = Thread.model_validate(data)
    assert again.decision_graph == thread.decision_graph
    assert thread_to_bytes(again) == thread_to_bytes(thread) == thread.to_json().encode()


def test_a_schema_1_file_loads_with_an_empty_graph_and_is_rewritten_unchanged() -> None:
    raw = (FIXTURES / "schema_v1.json").read_text()
    thread = Thread.from_json(raw)
    assert thread.decision_graph.is_empty()
    assert json.loads(thread.to_json()) == json.loads(raw)


def test_merging_two_copies_keeps_both_sides_entries_once() -> None:
    base = graph_thread()
    ours = Thread.model_validate(base.model_dump())
    theirs = Thread.model_validate(base.model_dump())
    ours.decision_graph.nodes.append(DecisionNode(node_type="outcome", title="ours"))
    theirs.decision_graph.nodes.append(DecisionNode(node_type="outcome", title="theirs"))
    theirs.touch()
    merged = merge_threads(ours, theirs).thread
    titles = [n.title for n in merged.decision_graph.nodes]
    assert sorted(titles) == sorted(["Fast search", "Add trigram index", "ours", "theirs"])
    assert len(merged.decision_graph.changes) == 1


def test_decision_titles_and_descriptions_are_searchable_on_the_server() -> None:
    thread = graph_thread()
    thread.decision_graph.nodes[1].description = "trigram beats LIKE on big tables"
    text = search_text(thread)
    assert "Add trigram index" in text and "trigram beats LIKE" in text
