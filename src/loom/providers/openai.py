"""OpenAI: the Responses API (loom.llm.openai_responses) or Chat Completions
(loom.llm.openai), `[providers.openai] api`."""

from loom.providers._declaration import ProviderDeclaration

DECLARATION = ProviderDeclaration(
    name="openai",
    adapter="openai_responses:OpenAIResponsesProvider",
    apis={
        "responses": "openai_responses:OpenAIResponsesProvider",
        "chat": "openai:OpenAIProvider",  # Chat Completions
    },
    key_vars=("OPENAI_API_KEY",),
    base_url_vars=("OPENAI_BASE_URL",),
    model_prefixes=("gpt", "o1", "o3", "o4", "chatgpt"),
    role_models={"architect": "gpt-5", "editor": "gpt-5-mini"},
    family=lambda _model_id: "openai",
    images_in_tool_results=True,  # in a user message after the answer's results
    caching="automatic-prefix",
    reasoning="reasoning-items",
)
