"""The secrets a session masks: environment, configured API keys, the sync token."""

from __future__ import annotations

import pytest

from loom.config import LoomConfig
from loom.paths import LoomPaths
from loom.session.runtime.options import SessionOptions, known_secrets
from loom.store.credentials import Credentials, credentials_path, save_credentials


def test_known_secrets_gathers_every_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "env-token-0123456789")
    save_credentials(LoomPaths.from_env(), Credentials("http://127.0.0.1:9", "sync-tok-abcdef123"))
    config = LoomConfig.model_validate(
        {"providers": {"openai-compatible": {"api_key": "file-key-0123456789"}}}
    )
    found = known_secrets(config)
    assert found["SOME_SERVICE_TOKEN"] == "env-token-0123456789"
    assert found["OPENAI_COMPATIBLE_API_KEY"] == "file-key-0123456789"
    assert found["LOOM_SYNC_TOKEN"] == "sync-tok-abcdef123"
    assert SessionOptions.from_config(config).secrets == found


def test_unreadable_credentials_do_not_stop_a_session() -> None:
    path = credentials_path(LoomPaths.from_env())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    assert "LOOM_SYNC_TOKEN" not in known_secrets(LoomConfig())
