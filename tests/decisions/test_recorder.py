"""Logging, linking, updating and querying through the recorder, on a real loom.db."""

from __future__ import annotations

import pytest

from loom.core.thread import Thread
from loom.decisions.context import build_decision_context
from loom.decisions.export import export
from loom.decisions.pulse import pulse
from loom.decisions.recorder import DecisionInputError
from loom.llm.tokens import estimate_tokens


def test_a_goal_two_options_a_decision_an_action_and_an_outcome(project) -> None:
    rec = project.recorder()
    goal = rec.add(node_type="goal", title="Make login errors clear").node
    a = rec.add(node_type="option", title="Wrap in try/except", parent=goal.id).node
    b = rec.add(node_type="option", title="Return a Result type", parent=goal.id).node
    decision = rec.add(
        node_type="decision", title="Use try/except", parent=a.id, edge_type="chosen", confidence=80
    ).node
    rec.link(b.id, decision.id, "rejected")
    action = rec.add(node_type="action", title="Edit auth.py", parent=decision.id).node
    rec.add(node_type="outcome", title="Tests pass", parent=action.id, confidence=95)
    index = rec.index()
    assert index.count(str(project.root)) == 6
    report = pulse(index, str(project.root))
    assert [n.id for n in report.active_goals] == [goal.id]
    assert report.gaps == []
    assert report.health > 80
    mermaid = export(index.nodes(newest_first=False), index.edges(), "mermaid")
    assert mermaid.startswith("flowchart TD")
    assert '|"chosen"|' in mermaid and '|"rejected"|' in mermaid


def test_pulse_finds_a_goal_without_action_or_outcome(project) -> None:
    rec = project.recorder()
    goal = rec.add(node_type="goal", title="Speed up search").node
    rec.add(node_type="decision", title="Add an index", parent=goal.id)
    report = pulse(rec.index(), str(project.root))
    assert {n.node_type for n in report.gaps} == {"goal", "decision"}
    assert report.health < 100


def test_confidence_below_50_marks_dependants_uncertain(project) -> None:
    rec = project.recorder()
    base = rec.add(node_type="decision", title="Use SQLite", confidence=90).node
    mid = rec.add(
        node_type="decision", title="FTS5 search", parent=base.id, edge_type="requires"
    ).node
    leaf = rec.add(
        node_type="action", title="Write triggers", parent=mid.id, edge_type="requires"
    ).node
    unrelated = rec.add(node_type="action", title="Docs", parent=base.id).node
    logged = rec.update(base.id, confidence=30, rationale="WAL issues on NFS")
    assert [n.id for n in logged.uncertain] == [mid.id, leaf.id]
    assert unrelated.id not in {n.id for n in logged.uncertain}
    assert set(pulse(rec.index(), str(project.root)).uncertain) == {mid.id, leaf.id}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: r.add(node_type="wish", title="x"), "unknown node type 'wish'"),
        (lambda r: r.add(node_type="goal", title="x", confidence=140), "out of range"),
        (lambda r: r.add(node_type="goal", title="x", confidence=-1), "out of range"),
        (lambda r: r.add(node_type="goal", title="x", parent="D-nope"), "no node 'D-nope'"),
        (lambda r: r.add(node_type="goal", title="  "), "title is required"),
        (lambda r: r.add(node_type="goal", title="x", edge_type="chosen"), "needs a parent"),
        (lambda r: r.update("D-nope", status="abandoned"), "no node"),
        (lambda r: r.update("D-nope"), "give a new status or confidence"),
    ],
)
def test_bad_input_says_how_to_call_it_right(project, call, message) -> None:
    rec = project.recorder()
    with pytest.raises(DecisionInputError, match=message):
        call(rec)
    assert rec.log.is_empty()  # nothing half-recorded


def test_a_cycle_of_supersedes_is_refused(project) -> None:
    rec = project.recorder()
    old = rec.add(node_type="decision", title="v1").node
    new = rec.add(node_type="decision", title="v2", parent=old.id, edge_type="supersedes").node
    assert rec.index().node(old.id).status == "superseded"
    with pytest.raises(DecisionInputError, match="cycle"):
        rec.link(new.id, old.id, "supersedes")


def test_a_change_to_another_threads_node_lives_in_the_changing_thread(project) -> None:
    first = project.recorder()
    goal = first.add(node_type="decision", title="Use Redis").node
    project.save(first.thread)
    before = project.threads.joinpath(f"{first.thread.id}.json").read_bytes()
    second = project.recorder(Thread.new(workspace_root=str(project.root)))
    second.update(goal.id, status="abandoned", confidence=20)
    project.save(second.thread)
    assert project.threads.joinpath(f"{first.thread.id}.json").read_bytes() == before
    assert second.thread.decision_graph.changes[0].node_id == goal.id
    fresh = project.recorder(Thread.new(workspace_root=str(project.root)))
    row = fresh.index().node(goal.id)
    assert (row.status, row.confidence) == ("abandoned", 20)


def test_context_zone_never_exceeds_its_budget(project) -> None:
    rec = project.recorder()
    for i in range(60):
        rec.add(
            node_type="goal" if i % 3 == 0 else "decision",
            title=f"Entry number {i} " + "word " * 20,
            description="why " * 50,
        )
    rec.update(rec.log.nodes[1].id, status="abandoned")
    index = rec.index()
    for budget in (0, 10, 60, 200, 1024):
        text = build_decision_context(index, str(project.root), budget)
        assert estimate_tokens(text) <= budget
    full = build_decision_context(index, str(project.root), 4000)
    assert "### Active Goals" in full and "### Recent Decisions" in full
    assert "### Prior Attempts & Lessons" in full and "(abandoned)" in full


def test_other_projects_nodes_stay_out(project, tmp_path) -> None:
    other = Thread.new(workspace_root=str(tmp_path / "elsewhere"))
    rec_other = project.recorder(other)
    rec_other.add(node_type="goal", title="Elsewhere goal")
    project.save(other)
    rec = project.recorder()
    rec.add(node_type="goal", title="Here goal")
    text = build_decision_context(rec.index(), str(project.root), 1024)
    assert "Here goal" in text and "Elsewhere goal" not in text


def test_sessions_opening_a_fresh_database_at_once_all_migrate_cleanly(tmp_path) -> None:
    """Twenty sessions starting together each open the index: the migration runs once."""
    import threading

    from loom.decisions.index import DecisionIndex

    database = tmp_path / "loom.db"
    errors: list[BaseException] = []
    start = threading.Barrier(20)

    def open_one() -> None:
        try:
            start.wait()
            DecisionIndex.open(database).close()
        except BaseException as exc:  # collected: the assertion below names it
            errors.append(exc)

    workers = [threading.Thread(target=open_one) for _ in range(20)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
