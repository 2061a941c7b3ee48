"""Any server speaking OpenAI's Chat Completions (a local model, a router); adapter:
loom.llm.openai. Its key is optional and its base URL required."""

from loom.providers._declaration import ProviderDeclaration, hosted_family_of

DECLARATION = ProviderDeclaration(
    name="openai-compatible",
    adapter="openai:OpenAICompatibleProvider",
    apis={
        "chat": "openai:OpenAICompatibleProvider",
        "responses": "openai_responses:OpenAIResponsesProvider",
    },
    key_vars=("OPENAI_COMPATIBLE_API_KEY",),
    base_url_vars=("OPENAI_COMPATIBLE_BASE_URL",),
    key_required=False,
    base_url_required=True,
    aliases=("openai_compatible",),
    # a router serving a hosted family's model gets that family's prompt
    family=lambda model_id: hosted_family_of(model_id) or "local",
    images_in_tool_results=True,
    caching="automatic-prefix",  # local servers (llama.cpp, vLLM) reuse a repeated prefix
    text_tool_calls=True,
)
