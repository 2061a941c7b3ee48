"""The thread's fields have one home, `core/thread.py`; the index reads thread files with
the standard library only (`store/summary.py`, the `loom list` fast path) and lists
them as `ThreadSummary` rows (`store/base.py`). These tests tie the copies to the model,
so a field added to `Thread` that the index checks or shows fails here until both agree."""

from __future__ import annotations

import dataclasses
import types
import typing

from loom.core.messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from loom.core.thread import AgentStateKind, Thread, ThreadVisibility
from loom.store import summary
from loom.store.base import ThreadSummary

# Top-level fields the index checks by hand (not in summary._FIELD_TYPES), or that a
# file carries as nested objects the record reads part by part.
CHECKED_BY_HAND = {"schema_version", "id", "version", "created_at", "updated_at",
                   "last_activity_at", "visibility"}  # fmt: skip
NESTED = {"conversation", "agent_state", "metadata", "decision_graph", "todos", "git_commits"}
# ThreadSummary columns the index derives rather than copies from a top-level field
DERIVED = {"title": "metadata.title", "message_count": "len(conversation.messages)",
           "agent_state_kind": "agent_state.kind"}  # fmt: skip


def json_types(annotation: object) -> set[type]:
    """The JSON types a field of `annotation` holds in a thread file."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return set().union(*(json_types(a) for a in args))
    origin = typing.get_origin(annotation) or annotation
    return {type(None) if origin is None else origin}  # type: ignore[arg-type]


def thread_fields() -> dict[str, object]:
    hints = typing.get_type_hints(Thread)
    return {name: hints[name] for name in Thread.model_fields}


def test_every_scalar_thread_field_is_type_checked_by_the_index() -> None:
    """A file the index accepts must also load: each top-level field's JSON type is
    checked in summary._FIELD_TYPES, with the types the model allows."""
    fields = thread_fields()
    unchecked = set(fields) - CHECKED_BY_HAND - NESTED - set(summary._FIELD_TYPES)
    assert not unchecked, f"add {sorted(unchecked)} to _FIELD_TYPES in store/summary.py"
    stale = set(summary._FIELD_TYPES) - set(fields)
    assert not stale, f"{sorted(stale)} in store/summary.py are not Thread fields"
    for name, kinds in summary._FIELD_TYPES.items():
        assert set(kinds) == json_types(fields[name]), name


def test_the_index_knows_the_model_s_enumerations() -> None:
    assert set(summary.AGENT_STATE_KINDS) == {k.value for k in AgentStateKind}
    assert summary.AGENT_STATE_KINDS[0] == Thread().agent_state.kind  # the default first
    assert set(summary.VISIBILITIES) == {v.value for v in ThreadVisibility}
    roles = {m.model_fields["role"].default for m in
             (UserMessage, AssistantMessage, ToolMessage, SystemMessage)}  # fmt: skip
    assert set(summary.ROLES) == roles
    assert set(summary.TIMESTAMP_FIELDS) <= set(Thread.model_fields)


def test_a_thread_summary_is_a_thread_s_fields_or_derived_from_them() -> None:
    fields = set(Thread.model_fields)
    listed = {f.name for f in dataclasses.fields(ThreadSummary)}
    assert not listed - fields - DERIVED.keys(), "ThreadSummary shows a field Thread lacks"
    record = summary.extract_record(Thread().model_dump(mode="json"), None)
    assert listed <= set(vars(record)), "IndexRecord must carry every ThreadSummary column"
