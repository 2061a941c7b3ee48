"""How the suite is spread over pytest-xdist workers (scripts/test runs `-n auto
--dist loadgroup`).

The browser tests (tests/web) share one xdist group, so a single worker runs them one
after another: sync Playwright holds an event loop while its browser is open, and two
Chromiums on a 2-core machine would only slow each other down. The group is the
longest unit of work, so it is collected first and starts at once instead of being
the last to end. Every other test is its own unit and goes to whichever worker is free.
"""

from __future__ import annotations

import pytest

BROWSER_GROUP = "browser"
BROWSER_FOLDER = "tests/web/"


def _is_browser_test(item: pytest.Item) -> bool:
    return item.nodeid.startswith(BROWSER_FOLDER)


@pytest.hookimpl(tryfirst=True)  # before xdist turns the group marks into node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _is_browser_test(item):
            item.add_marker(pytest.mark.xdist_group(BROWSER_GROUP))
    items.sort(key=lambda item: not _is_browser_test(item))  # stable: order kept otherwise
