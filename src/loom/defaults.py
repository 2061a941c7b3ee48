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
