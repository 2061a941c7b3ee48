"""Every released thread schema keeps loading: one fixture file per schema version."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loom.core.schema import SCHEMA_VERSION
from loom.core.thread import Thread
from loom.store.local import LocalThreadStore

FIXTURES = Path(__file__).parent.parent / "fixtures" / "threads"


def test_there_is_a_fixture_for_every_schema_version() -> None:
    versions = {json.loads(p.read_text())["schema_version"] for p in FIXTURES.glob("*.json")}
    assert versions == set(range(1, SCHEMA_VERSION + 1))


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("schema_v*.json")), ids=lambda p: p.stem)
def test_fixture_loads_lists_searches_and_round_trips(fixture: Path) -> None:
    original = json.loads(fixture.read_text())
    store = LocalThreadStore()
    store.threads_dir.mkdir(parents=True)
    shutil.copy(fixture, store.path_for(original["id"]))

    thread = store.load(original["id"])
    assert isinstance(thread, Thread)
    assert thread.version == original["version"]
    assert len(thread.messages) == len(original["conversation"]["messages"])
    (summary,) = store.list()
    assert summary.id == original["id"] and summary.title == original["metadata"]["title"]
    assert store.search("e4f5a6b")[0].summary.id == original["id"]
    assert store.search("check")[0].summary.id == original["id"]

    store.save(thread)  # rewriting keeps every field, including unknown ones
    assert json.loads(store.path_for(thread.id).read_text()) == original
