"""Which values are secrets, and masking them in text.

Two lines of defence share these rules: commands the agent runs get an environment
without secret variables (`loom.tools.agent_env`), and any known secret value that still
reaches a message (tool output, the model's text, a pasted key) is masked as
`[redacted:NAME]` before the message is saved, sent to a model or synced.

A variable is a secret by its name (`*_API_KEY`, `*_TOKEN`, `*_SECRET*`, `*_PASSWORD`,
cloud credentials, ...) or by its value (a URL carrying a password, such as a
`DATABASE_URL`). Pure: no I/O, callers pass the environment in.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from loom.core.jsonish import is_json_list, is_json_object

# Values shorter than this are not masked: "1" or "true" would blot out ordinary text.
MIN_SECRET_CHARS = 8

_SECRET_WORDS = {
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "APIKEY",
    "CREDENTIAL",
    "CREDENTIALS",
    "PRIVATE_KEY",
    "API_KEY",
    "ACCESS_KEY",
    "ACCESS_KEY_ID",
    "SECRET_KEY",
    "AUTH_KEY",
    "CLIENT_SECRET",
    "SAS_TOKEN",
    "CONNECTION_STRING",
}
# Well-known names the word rule would miss.
_SECRET_NAMES = {
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_GHA_CREDS_PATH",
    "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE",
    "AZURE_CLIENT_CERTIFICATE_PATH",
    "AZURE_STORAGE_KEY",
    "AZURE_STORAGE_CONNECTION_STRING",
    "ARM_CLIENT_SECRET",
    "PGPASSWORD",
    "MYSQL_PWD",
    "NPM_CONFIG__AUTH",
    "HF_TOKEN",
    "VAULT_TOKEN",
    "DOCKER_AUTH_CONFIG",
    "SSH_PRIVATE_KEY",
}
# The scheme starts where a run of scheme characters starts (the lookbehind): without it a
# long value with no `://` is rescanned from every character (quadratic).
_URL_WITH_PASSWORD = re.compile(
    r"(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@", re.IGNORECASE
)


def is_secret_name(name: str) -> bool:
    """True for variable names that by convention hold credentials."""
    upper = name.upper()
    if upper in _SECRET_NAMES:
        return True
    parts = [p for p in upper.split("_") if p]
    joined = {"_".join(parts[i : j + 1]) for i in range(len(parts)) for j in range(i, len(parts))}
    return bool(joined & _SECRET_WORDS) or upper.endswith(("_KEY", "_PWD", "_PASS"))


def hide_url_passwords(text: str, hidden: str) -> str:
    """`text` with the password of each `scheme://user:password@` in it replaced by
    `hidden`; the rest stays as it is (`postgres://u:<hidden>@h/db`)."""

    def hide(match: re.Match[str]) -> str:
        scheme, _, rest = match.group(0).partition("://")
        return f"{scheme}://{rest.partition(':')[0]}:{hidden}@"

    return _URL_WITH_PASSWORD.sub(hide, text)


def is_secret_variable(name: str, value: str) -> bool:
    """A secret by its name, or a value that carries a password (`postgres://u:pw@h/db`)."""
    return is_secret_name(name) or bool(_URL_WITH_PASSWORD.search(value or ""))


def secrets_in(environ: Mapping[str, str]) -> dict[str, str]:
    """The secret variables of `environ` worth masking: name -> value."""
    return {
        name: value
        for name, value in environ.items()
        if is_secret_variable(name, value) and len(value.strip()) >= MIN_SECRET_CHARS
    }


@functools.lru_cache(maxsize=16)
def _pattern(items: tuple[tuple[str, str], ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    names: dict[str, str] = {}
    for name, value in items:
        names.setdefault(value, name)
    ordered = sorted(names, key=len, reverse=True)  # a key that contains another wins
    return re.compile("|".join(map(re.escape, ordered))), names


def redact(text: str, secrets: Mapping[str, str]) -> str:
    """`text` with every value of `secrets` (name -> value) replaced by `[redacted:NAME]`.

    Values shorter than MIN_SECRET_CHARS are left alone; surrounding whitespace of a value
    is ignored (a key read from a file often ends in a newline)."""
    if not text or not secrets:
        return text
    items = tuple(
        sorted(
            (name, value.strip())
            for name, value in secrets.items()
            if len(value.strip()) >= MIN_SECRET_CHARS
        )
    )
    if not items or not any(value in text for _, value in items):
        return text
    pattern, names = _pattern(items)
    return pattern.sub(lambda match: f"[redacted:{names[match.group(0)]}]", text)


def redact_value(value: object, secrets: Mapping[str, str]) -> object:
    """`value` (text, or JSON-like lists and dicts of it) with secrets masked."""
    if isinstance(value, str):
        return redact(value, secrets)
    if is_json_list(value):
        return [redact_value(item, secrets) for item in value]
    if is_json_object(value):
        return {key: redact_value(item, secrets) for key, item in value.items()}
    return value


def redact_message(message: Any, secrets: Mapping[str, str]) -> None:
    """Mask secrets in a message's content and tool call arguments, in place: the same
    message object is in the thread and in the conversation the model is sent next."""
    if not secrets:
        return
    content = getattr(message, "content", None)
    if isinstance(content, str):
        message.content = redact(content, secrets)
    for call in getattr(message, "tool_calls", None) or ():
        call.arguments_json = redact_value(call.arguments_json, secrets)
