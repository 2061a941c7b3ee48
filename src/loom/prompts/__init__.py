"""The agent's system prompt: a text file per model family, the environment block, the
project's instructions and any extra text, put together by one function.

    family = family_of("anthropic", "claude-sonnet-4-6")
    text = build_system_prompt(family, detect_environment(root), instructions, extra)

The prompts are files in this package (`anthropic.md`, `openai.md`, `gemini.md`,
`local.md` for small models behind an OpenAI-compatible server, `architect.md` for
architect mode's planner) so they can be read, diffed and reviewed as prose.
"""

from __future__ import annotations

import functools
from importlib import resources

from loom.prompts.environment import Environment, detect_environment, environment_news
from loom.prompts.instructions import (
    InstructionFile,
    NestedInstructions,
    ProjectInstructions,
    load_instructions,
)
from loom.providers import FAMILIES, Family, declaration, undeclared_family_of

__all__ = [
    "FAMILIES",
    "Environment",
    "Family",
    "InstructionFile",
    "NestedInstructions",
    "ProjectInstructions",
    "architect_prompt",
    "base_prompt",
    "build_system_prompt",
    "detect_environment",
    "environment_news",
    "family_of",
    "load_instructions",
]


def family_of(provider: str, model_id: str = "") -> Family:
    """Which prompt suits a model: its provider's declaration says (an OpenAI-compatible
    endpoint serving a hosted family's model gets that family's); a provider Loom does
    not declare gets the family its model id names, else OpenAI's."""
    decl = declaration(provider)
    if decl is not None:
        return decl.family(model_id)
    return undeclared_family_of(model_id)


@functools.cache
def base_prompt(name: str) -> str:
    """The text of one prompt file of this package (a family, or 'architect')."""
    return resources.files("loom.prompts").joinpath(f"{name}.md").read_text("utf-8").strip()


def build_system_prompt(
    family: Family,
    environment: Environment | str | None,
    instructions: str = "",
    extra: str = "",
    base: str | None = None,
) -> str:
    """The system prompt: the family's text (or `base`, a custom agent's own), the
    environment block, `extra` (e.g. a sub-agent's brief or a provider's tool-call
    format), then the project's instructions (already fitted to their budget)."""
    env = environment.render() if isinstance(environment, Environment) else environment
    head = base.strip() if base else base_prompt(family)
    parts = [head, env or "", extra.strip(), instructions.strip()]
    return "\n\n".join(part for part in parts if part)


def architect_prompt(
    environment: Environment | str | None, instructions: str, plan_format: str
) -> str:
    """The architect's planning prompt: what it is for, the environment, the plan's
    format, and the project's instructions."""
    env = environment.render() if isinstance(environment, Environment) else environment
    parts = [base_prompt("architect"), plan_format, env or "", instructions.strip()]
    return "\n\n".join(part for part in parts if part)
