"""Defaults that both loom.config and the lower layers need, kept in one place.

loom.config declares its keys with these; repointel, lsp and the shell tool use them
when they run without a configuration (tests, `loom map` on an unconfigured project,
which must not load pydantic). Plain constants: importing this costs nothing.
"""

SHELL_TIMEOUT_S = 120.0  # [shell] timeout
SHELL_MAX_OUTPUT_BYTES = 30_000  # [shell] max_output_bytes
REPO_MAP_TOKENS = 1024  # [repo] map_tokens
# [sandbox] limits for each agent command (see loom.sandbox.limits): room for a parallel
# build or a test suite, not for a fork bomb, a runaway allocation or a disk-filling file.
SANDBOX_MAX_PROCESSES = 512
SANDBOX_MAX_MEMORY_MB = 8192
SANDBOX_MAX_FILE_MB = 1024
REPO_MAX_FILE_BYTES = 1_000_000  # [repo] max_file_bytes
LSP_SERVERS: dict[str, tuple[str, ...]] = {  # [lsp] servers
    "python": ("basedpyright-langserver", "--stdio"),
}

# The environment variables each built-in provider reads, first set wins: its API key and
# its base URL (loom.llm.registry uses them; loom.config reads them as providers.NAME.*).
PROVIDER_KEY_VARS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openai-compatible": ("OPENAI_COMPATIBLE_API_KEY",),
}
PROVIDER_BASE_URL_VARS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_BASE_URL",),
    "openai": ("OPENAI_BASE_URL",),
    "google": ("GOOGLE_GEMINI_BASE_URL",),
    "openai-compatible": ("OPENAI_COMPATIBLE_BASE_URL",),
}
# a bearer token read after the API key (sent as `Authorization: Bearer`, not a config key)
PROVIDER_TOKEN_VARS: dict[str, tuple[str, ...]] = {"anthropic": ("ANTHROPIC_AUTH_TOKEN",)}
