"""One language server per language per project: started on first need, restarted if it
died, all stopped with the session (`await supervisor.aclose()`)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loom import defaults
from loom.lsp.client import DEFAULT_TIMEOUT, LspClient, LspError
from loom.lsp.launch import ServerLaunch
from loom.repointel.languages import detect_language

DEFAULT_SERVERS: dict[str, list[str]] = {k: list(v) for k, v in defaults.LSP_SERVERS.items()}
MAX_RESTARTS = 3  # within RESTART_WINDOW seconds; then the language is given up on
RESTART_WINDOW = 120.0
# LSP languageId for our language names, and which config key serves them.
_CONFIG_KEY = {"tsx": "typescript", "javascript": "javascript"}
_LANGUAGE_ID = {"tsx": "typescriptreact", "cpp": "cpp", "shell": "shellscript"}


class NoServerError(LspError):
    """No language server is configured for this kind of file."""


@dataclass(frozen=True)
class LspSettings:
    """The [lsp] settings: whether language servers are used, and which per language."""

    enabled: bool = True
    servers: dict[str, list[str]] | None = None  # None: DEFAULT_SERVERS

    @classmethod
    def from_section(cls, section: Any) -> LspSettings:
        """From loom.config's typed [lsp] section (LspSection)."""
        return cls(enabled=section.enabled, servers=dict(section.servers))


class LspSupervisor:
    def __init__(
        self,
        root: Path,
        servers: dict[str, list[str]] | None = None,
        request_timeout: float = DEFAULT_TIMEOUT,
        enabled: bool = True,
        launch: ServerLaunch | None = None,
    ) -> None:
        self.root = root.resolve()
        # how its servers start: the session's sandbox and trust (see lsp/launch.py);
        # without one, unconfined but as an untrusted project's (the safe default)
        self.launch = launch or ServerLaunch.for_project(self.root)
        self.servers = dict(DEFAULT_SERVERS if servers is None else servers)
        self.request_timeout = request_timeout
        self.enabled = enabled
        self._clients: dict[str, LspClient] = {}
        self._starts: dict[str, list[float]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    @classmethod
    def from_settings(
        cls, root: Path, settings: LspSettings, launch: ServerLaunch | None = None
    ) -> LspSupervisor:
        return cls(root, settings.servers, enabled=settings.enabled, launch=launch)

    def server_key(self, path: Path) -> str:
        language = detect_language(path)
        if language is None:
            raise NoServerError(
                f"{path.name}: Loom does not know what language this file is in, so no "
                "language server can check it"
            )
        key = _CONFIG_KEY.get(language, language)
        if not self.enabled:
            raise NoServerError("language servers are switched off ([lsp] enabled = false)")
        if key not in self.servers:
            configured = ", ".join(sorted(self.servers)) or "none"
            raise NoServerError(
                f"no language server is configured for {language} files like {path.name} "
                f"(configured: {configured}); add one under [lsp] servers, e.g. "
                f'{key} = ["<server-command>", "--stdio"]'
            )
        return key

    async def client_for(self, path: Path) -> LspClient:
        key = self.server_key(path)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            client = self._clients.get(key)
            if client is not None and client.alive:
                return client
            if client is not None:  # it died: clean up, then restart within limits
                await client.kill()
            recent = [t for t in self._starts.get(key, []) if time.monotonic() - t < RESTART_WINDOW]
            if len(recent) >= MAX_RESTARTS:
                raise LspError(
                    f"the {key} language server crashed {len(recent)} times in the last "
                    f"{RESTART_WINDOW:.0f} s; not starting it again now (check "
                    f"`{' '.join(self.servers[key])}` by hand)"
                )
            self._starts[key] = [*recent, time.monotonic()]
            language = detect_language(path) or key
            client = LspClient(
                self.servers[key],
                self.root,
                _LANGUAGE_ID.get(language, language),
                self.request_timeout,
                self.launch,
            )
            self._clients[key] = client
            try:
                await client.start()
            except BaseException:
                await client.kill()
                raise
            return client

    def running(self) -> list[str]:
        return sorted(key for key, client in self._clients.items() if client.alive)

    async def aclose(self) -> None:
        """Shut every server down (politely, then by force). Safe to call twice."""
        clients, self._clients = list(self._clients.values()), {}
        await asyncio.gather(*(c.shutdown() for c in clients), return_exceptions=True)


_SUPERVISORS: dict[tuple[Path, int], LspSupervisor] = {}


def supervisor_for(root: Path, settings: LspSettings | None = None) -> LspSupervisor:
    """The shared supervisor of a project on the running event loop (made on first use,
    with `settings`, the defaults when None)."""
    loop_id = id(asyncio.get_running_loop())
    key = (root.resolve(), loop_id)
    supervisor = _SUPERVISORS.get(key)
    if supervisor is None:
        supervisor = LspSupervisor.from_settings(root, settings or LspSettings())
        _SUPERVISORS[key] = supervisor
    return supervisor


async def aclose_project(root: Path) -> None:
    """Stop the language servers of a project started on this event loop."""
    loop_id = id(asyncio.get_running_loop())
    supervisor = _SUPERVISORS.pop((root.resolve(), loop_id), None)
    if supervisor is not None:
        await supervisor.aclose()
