"""Sync credentials from `loom login`: server URL and API token, in a 0600 file.

The token is never logged or printed; `Credentials.__repr__` hides it.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from loom.paths import LoomPaths

FILE_NAME = "credentials.json"


class CredentialsError(ValueError):
    """The credentials file exists but cannot be used; the message says what to do."""


@dataclass(frozen=True)
class Credentials:
    server_url: str
    token: str
    user: str | None = None
    org: str | None = None

    def __repr__(self) -> str:
        return f"Credentials(server_url={self.server_url!r}, user={self.user!r}, token=<hidden>)"

    __str__ = __repr__


def credentials_path(paths: LoomPaths) -> Path:
    return paths.config / FILE_NAME


def load_credentials(paths: LoomPaths) -> Credentials | None:
    path = credentials_path(paths)
    try:
        data = json.loads(path.read_text())
        return Credentials(
            server_url=str(data["server_url"]),
            token=str(data["token"]),
            user=data.get("user"),
            org=data.get("org"),
        )
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as exc:
        raise CredentialsError(
            f"{path} is damaged ({exc.__class__.__name__}); run `loom login` again"
        ) from exc


def save_credentials(paths: LoomPaths, creds: Credentials) -> Path:
    """Write atomically with mode 0600 from the first byte (never briefly world-readable)."""
    path = credentials_path(paths)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(
        {
            "server_url": creds.server_url,
            "token": creds.token,
            "user": creds.user,
            "org": creds.org,
        },
        indent=2,
    ).encode()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return path


def delete_credentials(paths: LoomPaths) -> bool:
    with contextlib.suppress(FileNotFoundError):
        credentials_path(paths).unlink()
        return True
    return False
