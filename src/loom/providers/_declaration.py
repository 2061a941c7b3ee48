"""What a built-in provider is, declared once: `ProviderDeclaration`.

Plain data (no SDK, no pydantic), so `loom.config` and every floor above read it and
`loom --version` stays cheap. Each built-in provider's declaration is its own module of
this package; everything that used to list providers by name reads these.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

# the system prompt file a model gets (loom/prompts/<family>.md)
Family = Literal["anthropic", "openai", "gemini", "local"]
FAMILIES: tuple[Family, ...] = get_args(Family)
# how the provider's prompt cache is reached: explicit `cache_control` breakpoints, a
# cache the provider keeps by itself for a repeated prefix, or none Loom knows of
CachingStyle = Literal["breakpoints", "automatic-prefix", "none"]
Role = Literal["architect", "editor"]


def hosted_family_of(model_id: str) -> Family | None:
    """The hosted family a model id names (a router serving `anthropic/claude-...`),
    or None."""
    name = model_id.lower().rsplit("/", 1)[-1]
    if "claude" in name:
        return "anthropic"
    if "gemini" in name:
        return "gemini"
    if name.startswith(("gpt-", "o1", "o3", "o4")):
        return "openai"
    return None


def undeclared_family_of(model_id: str) -> Family:
    """The prompt family for a provider Loom does not declare (a plugin's): the one its
    model id names, else OpenAI's (most servers speak its dialect)."""
    return hosted_family_of(model_id) or "openai"


@dataclass(frozen=True)
class ProviderDeclaration:
    name: str  # as in model names (`anthropic:claude-sonnet-4-6`) and `[providers.NAME]`
    adapter: str  # "module:Class" of its adapter in loom.llm, imported on first use
    key_vars: tuple[str, ...]  # environment variables holding its API key, first set wins
    base_url_vars: tuple[str, ...]  # ... its endpoint
    # the wire APIs `[providers.NAME] api` may pick, each with its adapter ("module:Class")
    apis: Mapping[str, str] = field(default_factory=dict)
    # a bearer token read after the API key (sent as `Authorization: Bearer`)
    token_vars: tuple[str, ...] = ()
    key_required: bool = True
    base_url_required: bool = False
    aliases: tuple[str, ...] = ()  # other spellings accepted in model names
    model_prefixes: tuple[str, ...] = ()  # a bare model id starting so is probably its
    # [model] architect / editor when not set: its strong and fast models
    role_models: Mapping[Role, str] = field(default_factory=dict)
    family: Callable[[str], Family] = lambda _model_id: "openai"  # prompt family of a model
    images_in_tool_results: bool = False  # Loom carries images in its tool results
    caching: CachingStyle = "none"
    # what reasoning it keeps and sends back (loom.llm.effort maps the effort knob per
    # model family): "thinking-blocks" (Claude's, signed), "reasoning-items" (OpenAI's,
    # encrypted), "thought-summaries" (Gemini's, shown only); None: none
    reasoning: str | None = None
    # `[providers.NAME]` keys whose values are masked in everything saved or sent
    secret_settings: tuple[str, ...] = ("api_key",)
    # `<tool_call>` blocks in the answer's text may be read as calls ([providers.NAME]
    # text_tool_calls), for local models served without native tool calling
    text_tool_calls: bool = False

    @property
    def secret_vars(self) -> tuple[str, ...]:
        """Environment variables whose values are masked: its key and token."""
        return self.key_vars + self.token_vars
