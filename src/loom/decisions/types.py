"""Node types: the built-in seven plus those plugins register (entry point group
`loom.node_types`; each entry point names a string, its one-line description). A broken
plugin is reported once and skipped, never fatal."""

from __future__ import annotations

import functools
import logging

from loom.core.decisions import BUILTIN_NODE_TYPES

ENTRY_POINT_GROUP = "loom.node_types"
log = logging.getLogger(__name__)

BUILTIN_DESCRIPTIONS = {
    "goal": "what the work is for",
    "decision": "a choice made, with why",
    "option": "a possibility considered",
    "action": "something done",
    "outcome": "what came of it (a result, a commit, a test run)",
    "observation": "a fact noticed along the way",
    "revisit": "a lesson: an earlier choice looked at again",
}


@functools.cache
def node_types() -> dict[str, str]:
    """Type name -> one-line description, built-ins first."""
    from loom._entry_points import entry_points

    types = dict(BUILTIN_DESCRIPTIONS)
    assert set(types) == set(BUILTIN_NODE_TYPES)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            value = entry.load()
            description = value() if callable(value) else value
            if not isinstance(description, str):
                raise TypeError("an entry point must name a string (the type's description)")
        except Exception as exc:
            log.warning("node type plugin %s skipped: %s", entry.name, exc)
            continue
        types.setdefault(entry.name, description)
    return types
