"""`--folder-times`: at the end of the run, the time spent in each test folder.

Sums every test's setup, call and teardown durations per folder under tests/ (a file
directly in tests/ counts as its own name). Under pytest-xdist the reports reach the
controller, so the table covers all workers; the figures are then summed worker time,
not wall time, and add up to more than the run's wall time.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

_TIMES: defaultdict[str, float] = defaultdict(float)
_COUNTS: defaultdict[str, int] = defaultdict(int)


def folder_of(nodeid: str) -> str:
    """`tests/cli/test_run.py::test_x` -> `cli`; `tests/test_config.py::t` -> `test_config.py`."""
    parts = nodeid.split("::", 1)[0].split("/")
    if parts and parts[0] == "tests":
        parts = parts[1:]
    return parts[0] if parts else nodeid


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--folder-times",
        action="store_true",
        default=False,
        help="print the time spent per test folder at the end (scripts/test passes it)",
    )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    folder = folder_of(report.nodeid)
    _TIMES[folder] += report.duration
    if report.when == "call" or (report.when == "setup" and report.skipped):
        _COUNTS[folder] += 1


@pytest.hookimpl(trylast=True)  # after --durations: the last table before the counts
def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    if not config.getoption("--folder-times") or not _TIMES:
        return
    terminalreporter.write_sep("=", "time per test folder (setup + call + teardown)")
    total = sum(_TIMES.values())
    for folder, seconds in sorted(_TIMES.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(f"{seconds:8.1f}s  {_COUNTS[folder]:5d} tests  {folder}")
    terminalreporter.write_line(f"{total:8.1f}s  {sum(_COUNTS.values()):5d} tests  (all)")
