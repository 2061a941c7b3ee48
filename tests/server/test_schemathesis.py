"""Property-based fuzzing of the whole API from /openapi.json: never a 5xx.

Runs against a real `loom server` process (SQLite and PostgreSQL) with a valid token,
so requests get
past authentication and reach the handlers and the database.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.core.result import Ok

from tests.support.server import LiveServer, add_user, migrate, postgres_database

# hypothesis types iterating HealthCheck as its metaclass's items (a gap in its stubs)
ALL_CHECKS = cast("list[HealthCheck]", list(HealthCheck))


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def fuzz_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, str]]:
    home: Path = tmp_path_factory.mktemp("fuzz")
    if request.param == "postgres":
        with postgres_database() as url:
            yield from _serve(migrate(url), home)
    else:
        yield from _serve(migrate(f"sqlite+aiosqlite:///{home / 'server.db'}"), home)


def _serve(url: str, home: Path) -> Iterator[tuple[LiveServer, str]]:
    token = add_user(url, "fuzzer", "fuzz-org")
    server = LiveServer(url, home).start()
    try:
        yield server, token
    finally:
        server.stop()


def test_no_server_errors(fuzz_server: tuple[LiveServer, str]) -> None:
    server, token = fuzz_server
    api = schemathesis.openapi.from_url(server.url + "/openapi.json")
    headers = {"Authorization": f"Bearer {token}"}
    failures: list[str] = []
    results = list(api.get_all_operations())
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    assert len(operations) == len(results) >= 10  # every operation of the schema loads

    for operation, mode in itertools.product(operations, GenerationMode):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=15, deadline=None, database=None, suppress_health_check=ALL_CHECKS)
        def fuzz(case) -> None:
            response = case.call(base_url=server.url, headers=headers, timeout=10)
            if response.status_code >= 500:
                failures.append(
                    f"{case.method} {case.formatted_path} -> "
                    f"{response.status_code}: {response.text[:300]}"
                )

        try:
            fuzz()
        except Unsatisfiable:
            # No way to make a negative case (e.g. GET /health takes no input).
            assert mode is GenerationMode.NEGATIVE, operation.label
    assert not failures, "\n".join(failures[:10])
