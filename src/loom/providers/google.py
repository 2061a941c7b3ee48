"""Google's Gemini API (adapter: loom.llm.google)."""

from loom.providers._declaration import ProviderDeclaration

DECLARATION = ProviderDeclaration(
    name="google",
    adapter="google:GoogleProvider",
    key_vars=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    base_url_vars=("GOOGLE_GEMINI_BASE_URL",),
    aliases=("gemini",),
    model_prefixes=("gemini",),
    role_models={"architect": "gemini-2.5-pro", "editor": "gemini-2.5-flash"},
    family=lambda _model_id: "gemini",
    images_in_tool_results=True,
    caching="automatic-prefix",  # implicit caching of a repeated prefix
    reasoning="thought-summaries",
)
