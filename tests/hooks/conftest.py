"""The hook tests' project: a git repository with a quiet `.loom.toml`."""

from tests.session.test_subagents import project  # noqa: F401 (the fixture)
