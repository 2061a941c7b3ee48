"""Which variables are secrets, and masking their values (issue 16, item 6)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loom.core.messages import AssistantMessage, ToolCall, ToolMessage
from loom.core.secrets import (
    is_secret_name,
    is_secret_variable,
    redact,
    redact_message,
    secrets_in,
)

SECRET_NAMES = [
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
    "OPENAI_COMPATIBLE_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "NPM_TOKEN", "HF_TOKEN",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_CLIENT_SECRET", "AZURE_STORAGE_KEY",
    "AZURE_STORAGE_CONNECTION_STRING", "ARM_CLIENT_SECRET", "PGPASSWORD", "MYSQL_PWD",
    "DB_PASSWORD", "SMTP_PASS", "STRIPE_SECRET_KEY", "SLACK_BOT_TOKEN", "VAULT_TOKEN",
    "LOOM_SYNC_TOKEN", "my_api_key", "Sentry_Auth_Token", "SSH_PRIVATE_KEY", "APIKEY",
    "DEPLOY_KEY", "CI_JOB_TOKEN", "SECRET", "JWT_SECRET", "CLIENT_SECRET_VALUE",
]  # fmt: skip
PLAIN_NAMES = [
    "PATH", "HOME", "LANG", "TERM", "SSH_AUTH_SOCK", "GIT_ASKPASS", "SSH_ASKPASS",
    "TOKENIZERS_PARALLELISM", "LOOM_HOME", "EDITOR", "PYTHONPATH", "VIRTUAL_ENV",
    "KEYBOARD", "PWD", "SECRETS_DIR", "PASSAGE", "GPG_TTY", "XDG_DATA_HOME",
]  # fmt: skip


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_plain_names(name: str) -> None:
    assert not is_secret_name(name)


def test_a_url_with_a_password_is_a_secret_whatever_its_name() -> None:
    assert is_secret_variable("DATABASE_URL", "postgres://u:pw-1234@h/db")
    assert is_secret_variable("LOOM_DATABASE_URL", "mysql+async://root:x@localhost/x")
    assert not is_secret_variable("DATABASE_URL", "postgres://localhost/db")
    assert not is_secret_variable("HOMEPAGE", "https://example.com/a@b")


def test_secrets_in_skips_short_values() -> None:
    env = {"A_TOKEN": "1", "B_TOKEN": "long-enough-value", "PATH": "/usr/bin"}
    assert secrets_in(env) == {"B_TOKEN": "long-enough-value"}


def test_redact_masks_every_occurrence_and_prefers_the_longest() -> None:
    secrets = {"SHORT_KEY": "abcdefgh", "LONG_KEY": "abcdefgh-ijkl"}
    text = "a abcdefgh-ijkl b abcdefgh c abcdefgh"
    assert redact(text, secrets) == (
        "a [redacted:LONG_KEY] b [redacted:SHORT_KEY] c [redacted:SHORT_KEY]"
    )
    assert redact("nothing here", secrets) == "nothing here"
    assert redact("key: sk-12345678\n", {"K": "sk-12345678\n"}) == "key: [redacted:K]\n"


def test_redact_message_masks_content_and_tool_arguments_in_place() -> None:
    secrets = {"OPENAI_API_KEY": "sk-test-abcdef123"}
    message = AssistantMessage(
        content="the key is sk-test-abcdef123",
        tool_calls=[
            ToolCall(
                id="1",
                tool_name="shell",
                arguments_json={
                    "command": "curl -H 'x: sk-test-abcdef123'",
                    "n": [1, "sk-test-abcdef123"],
                },
            )
        ],
    )
    redact_message(message, secrets)
    assert message.content == "the key is [redacted:OPENAI_API_KEY]"
    assert "sk-test" not in str(message.tool_calls[0].arguments_json)
    result = ToolMessage(tool_call_id="1", tool_name="shell", content="X=sk-test-abcdef123")
    redact_message(result, secrets)
    assert result.content == "X=[redacted:OPENAI_API_KEY]"


@given(
    before=st.text(max_size=40),
    after=st.text(max_size=40),
    secret=st.text(min_size=8, max_size=30).filter(lambda s: s.strip() == s),
)
def test_no_secret_survives_redaction(before: str, after: str, secret: str) -> None:
    redacted = redact(before + secret + after, {"THE_KEY": secret})
    if secret not in "[redacted:THE_KEY]":
        assert secret not in redacted
    assert "[redacted:THE_KEY]" in redacted
