"""OpenAI: the Responses API by default (loom.llm.openai_responses, which the registry
picks), Chat Completions with `[providers.openai] api = "chat"` (adapter: loom.llm.openai)."""

from loom.providers._declaration import ProviderDeclaration

DECLARATION = ProviderDeclaration(
    name="openai",
    adapter="openai:OpenAIProvider",
    key_vars=("OPENAI_API_KEY",),
    base_url_vars=("OPENAI_BASE_URL",),
    model_prefixes=("gpt", "o1", "o3", "o4", "chatgpt"),
    role_models={"architect": "gpt-5", "editor": "gpt-5-mini"},
    family=lambda _model_id: "openai",
    images_in_tool_results=True,  # in a user message after the answer's results
    caching="automatic-prefix",
    reasoning="reasoning-items",
    default_api="responses",  # the Responses API (its default; api = "chat" for the other)
)
