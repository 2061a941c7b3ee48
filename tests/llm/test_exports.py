"""`loom.llm`'s front door: `__all__` (what the type checker reads) names exactly the lazy
table's names, and each resolves to the object its module defines."""

from __future__ import annotations

import importlib

import loom.llm


def test_all_names_the_lazy_table() -> None:
    assert sorted(loom.llm.__all__) == sorted(loom.llm._EXPORTS)
    assert len(set(loom.llm.__all__)) == len(loom.llm.__all__)


def test_each_name_resolves_to_its_module() -> None:
    for name, module in loom.llm._EXPORTS.items():
        assert getattr(loom.llm, name) is getattr(importlib.import_module(module), name)
