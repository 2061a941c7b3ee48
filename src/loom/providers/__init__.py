"""The built-in providers, each declared in one module of this package
(`anthropic.py`, `openai.py`, `google.py`, `openai_compatible.py`): its name, key and
endpoint variables, role models, prompt family, capabilities and secrets. Nothing else
in Loom lists providers by name; read them here.

    decl = declaration("claude")        # aliases resolve
    decl.caching                        # "breakpoints"

Adding one: write its adapter in `loom.llm`, its declaration module here and add it to
`BUILTIN`.
"""

from __future__ import annotations

from loom.providers import anthropic, google, openai, openai_compatible
from loom.providers._declaration import (
    FAMILIES,
    CachingStyle,
    Family,
    ProviderDeclaration,
    Role,
    hosted_family_of,
    undeclared_family_of,
)

__all__ = [
    "BUILTIN",
    "FAMILIES",
    "CachingStyle",
    "Family",
    "ProviderDeclaration",
    "Role",
    "declaration",
    "hosted_family_of",
    "undeclared_family_of",
]

BUILTIN: tuple[ProviderDeclaration, ...] = (
    anthropic.DECLARATION,
    openai.DECLARATION,
    google.DECLARATION,
    openai_compatible.DECLARATION,
)
_BY_NAME = {d.name: d for d in BUILTIN} | {a: d for d in BUILTIN for a in d.aliases}


def declaration(name: str) -> ProviderDeclaration | None:
    """The built-in provider called `name` (or one of its aliases), else None (a plugin's,
    the scripted test provider, a typo)."""
    return _BY_NAME.get(name.strip().lower())
