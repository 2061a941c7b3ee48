"""How the suite is spread over pytest-xdist workers (scripts/test runs `-n auto
--dist loadgroup`).

Each browser test module (tests/web) is one xdist group, so one worker runs its tests
one after another: sync Playwright holds an event loop while the module's browser is
open (it closes at the end of the module, before the worker moves on). These groups are
the longest units of work, so they are collected first and start at once instead of
being the last to end. Every other test is its own unit and goes to whichever worker is
free.
"""

from __future__ import annotations

import pytest

BROWSER_FOLDER = "tests/web/"


def _browser_module(item: pytest.Item) -> str | None:
    """`web/test_chat.py` for a test in tests/web, else None."""
    path = item.nodeid.split("::", 1)[0]
    return path.removeprefix("tests/") if path.startswith(BROWSER_FOLDER) else None


@pytest.hookimpl(tryfirst=True)  # before xdist turns the group marks into node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = _browser_module(item)
        if module is not None:
            item.add_marker(pytest.mark.xdist_group(f"browser:{module}"))
    items.sort(key=lambda item: _browser_module(item) is None)  # stable: order kept otherwise
