"""Each built-in provider is declared once (loom.providers); nothing else names it."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from loom.config import ProvidersSection
from loom.llm.registry import create_provider, parse_model_name
from loom.providers import BUILTIN, declaration

SRC = Path(__file__).resolve().parents[2] / "src" / "loom"
# where a provider's name may stand as text: its declaration, its adapter (which says
# its own name), the price list
MAY_NAME_PROVIDERS = {
    "providers",
    "llm/anthropic.py",
    "llm/openai.py",
    "llm/openai_responses.py",
    "llm/effort.py",  # reasoning styles are named after the families that use them
    "llm/google.py",
    "llm/_direct.py",
    "llm/catalog.py",
}


@pytest.mark.parametrize("decl", BUILTIN, ids=lambda d: d.name)
def test_the_adapter_a_declaration_names_is_that_provider(
    decl, monkeypatch: pytest.MonkeyPatch
) -> None:
    for adapter in {decl.adapter, *decl.apis.values()}:
        module, _, cls = adapter.partition(":")
        assert hasattr(importlib.import_module(f"loom.llm.{module}"), cls)
    for var in decl.key_vars[:1] + decl.base_url_vars[:1]:
        monkeypatch.setenv(var, "http://127.0.0.1:9/v1" if "URL" in var else "k" * 20)
    assert create_provider(decl.name).name == decl.name
    for api in decl.apis:
        assert create_provider(decl.name, api=api).name == decl.name
    for alias in decl.aliases:
        assert parse_model_name(f"{alias}:m") == (decl.name, "m")
        assert declaration(alias) is decl


def test_config_has_a_providers_table_for_each_declaration() -> None:
    tables = {info.alias or name for name, info in ProvidersSection.model_fields.items()}
    assert tables == {d.name for d in BUILTIN}


def _names_in(path: Path) -> list[str]:
    names = {d.name for d in BUILTIN} | {a for d in BUILTIN for a in d.aliases}
    return [
        f"{path.relative_to(SRC)}:{node.lineno} {node.value!r}"
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Constant) and node.value in names
    ]


def test_no_module_lists_providers_by_name() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.split("/")[0] in MAY_NAME_PROVIDERS or rel in MAY_NAME_PROVIDERS:
            continue
        found += _names_in(path)
    assert not found, "read loom.providers instead of naming providers: " + ", ".join(found)
