"""Anthropic's Messages API (adapter: loom.llm.anthropic)."""

from loom.providers._declaration import ProviderDeclaration

DECLARATION = ProviderDeclaration(
    name="anthropic",
    adapter="anthropic:AnthropicProvider",
    key_vars=("ANTHROPIC_API_KEY",),
    token_vars=("ANTHROPIC_AUTH_TOKEN",),
    base_url_vars=("ANTHROPIC_BASE_URL",),
    aliases=("claude",),
    model_prefixes=("claude",),
    role_models={"architect": "claude-opus-4-6", "editor": "claude-haiku-4-5"},
    family=lambda _model_id: "anthropic",
    images_in_tool_results=True,
    caching="breakpoints",
    reasoning="thinking-blocks",
)
