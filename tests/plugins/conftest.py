"""The faces' fixtures (fake LLM server, a small git project) for the plugin tests."""

from tests.cli.conftest import project, server

__all__ = ["project", "server"]
