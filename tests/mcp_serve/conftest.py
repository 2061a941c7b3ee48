"""The MCP client fixtures, for tests that pair Loom's client with its server."""

from tests.mcp_client.conftest import open_hub  # noqa: F401 - fixture
