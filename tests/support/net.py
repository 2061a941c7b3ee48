"""Loopback ports for tests."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A loopback port free right now (bound, then released: nothing listens on it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
