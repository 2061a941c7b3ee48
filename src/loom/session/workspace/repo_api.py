"""`Workspace.repo`: the ranked repo map, the file/symbol index, diagnostics, the watcher.

`RepoApi.at(folder)` opens the project around a folder without a Workspace, and without
loading the pydantic config model when no config layer exists (what `loom map` needs to
stay fast). Heavy parts (tree-sitter, language servers) load on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.core.errors import BadInput

if TYPE_CHECKING:  # asyncio, logging, Counter: imported where used (`loom map` start-up)
    from collections import Counter

    from loom.config import LoomConfig
    from loom.repointel.index import RefreshStats
    from loom.repointel.service import RepoIntel
    from loom.repointel.settings import RepoSettings

SEVERITIES = ("error", "warning", "information", "hint")


@dataclass
class IndexReport:
    stats: RefreshStats
    symbols: int
    languages: Counter[str]
    max_file_bytes: int


@dataclass
class Diagnostics:
    path: Path
    text: str  # what the language server said, or why it could not be asked
    failed: bool = False  # the file could not be checked (no server, not readable)
    has_errors: bool = False


@dataclass
class RepoApi:
    root: Path
    settings: RepoSettings
    config: LoomConfig | None = None
    warnings: list[str] = field(default_factory=list)
    _watcher: Any = None
    _stopped: bool = False

    @classmethod
    def for_config(cls, config: LoomConfig) -> RepoApi:
        from loom.repointel.settings import RepoSettings

        return cls(config.project_root, RepoSettings.from_section(config.repo), config)

    @classmethod
    def at(cls, folder: Path | None = None) -> RepoApi:
        """The project around `folder` (default: here); with `folder`, exactly that one.
        BadInput for a folder that is not one; ConfigError for a broken config."""
        from loom.repointel.settings import RepoSettings

        start = (folder or Path.cwd()).resolve()
        if not start.is_dir():
            raise BadInput(f"{start} is not a directory", "pass a project folder with --root")
        quick = _unconfigured_root(start)
        if quick is not None:
            return cls(quick if folder is None else start, RepoSettings())
        from loom.config import load_config

        config = load_config(start)
        root = config.project_root if folder is None else start
        warnings = list(config.warnings)
        untrusted = config.trust.notice() if config.trust is not None else None
        if untrusted:  # e.g. the project's own language servers are not started
            warnings.append(untrusted)
        return cls(root, RepoSettings.from_section(config.repo), config, warnings)

    def _intel(self) -> RepoIntel:
        from loom.repointel.service import RepoIntel

        return RepoIntel(self.root, self.settings)

    def missing(self, files: Iterable[str]) -> list[str]:
        """Which of `files` (as given to --focus) do not exist in the project."""
        from loom.repointel.service import relative_path

        return [name for name in files if not (self.root / relative_path(self.root, name)).exists()]

    def map(
        self, tokens: int | None = None, focus: Iterable[str] = (), mention: Iterable[str] = ()
    ) -> str:
        """The ranked map fitted to `tokens` (default repo.map_tokens); "" when the
        project has no source files with definitions."""
        intel = self._intel()
        try:
            return intel.repo_map(tokens, list(focus), list(mention))
        finally:
            intel.close()

    def files(self) -> list[str]:
        """Every project file the index sees (its ignore rules; too-large files too),
        as sorted relative paths: the web UI's file tree."""
        from loom.repointel.scan import scan_project

        scan = scan_project(str(self.root), self.settings.ignore, self.settings.max_file_bytes)
        return sorted([*scan.files, *scan.too_large])

    def index(self, progress: Callable[[int, int], None] | None = None) -> IndexReport:
        """Bring the file and symbol index up to date; `progress(done, total)`."""
        from collections import Counter

        intel = self._intel()
        try:
            stats = intel.refresh(progress)
            files = intel.index.files.values()
            return IndexReport(
                stats,
                sum(r.n_defs for r in files),
                Counter(r.language for r in files if r.language),
                self.settings.max_file_bytes,
            )
        finally:
            intel.close()

    async def diagnostics(
        self, files: Iterable[Path], severity: str | None = None
    ) -> list[Diagnostics]:
        """Type and compile errors of `files` from their language servers (started for
        this call and stopped after it), lowest level shown: `severity` (warning)."""
        from loom.lsp.supervisor import LspSupervisor
        from loom.lsp.tools import LspDiagnostics
        from loom.tools.base import ToolContext, ToolError
        from loom.tools.services import ToolServices

        severity = severity or "warning"
        if severity not in SEVERITIES:
            raise BadInput(f"--severity {severity!r}", "use error, warning, information or hint")
        supervisor = LspSupervisor.from_settings(
            self.root, self._lsp_settings(), self._server_launch()
        )
        tool = LspDiagnostics(self.root)
        ctx = ToolContext(project_root=self.root, services=ToolServices(lsp_supervisor=supervisor))
        found = []
        try:
            for path in files:
                try:
                    args = {"path": str(Path(path).resolve()), "severity": severity}
                    result = await tool.run(args, ctx)
                except ToolError as exc:
                    found.append(Diagnostics(Path(path), str(exc), failed=True))
                    continue
                errors = bool(result.metadata.get("error"))
                found.append(Diagnostics(Path(path), result.content, has_errors=errors))
        finally:
            await supervisor.aclose()
        return found

    def _server_launch(self) -> Any:
        """How the language servers start here, as in a session: in the project's sandbox,
        the project's interpreter only when the person trusts it (loom.lsp.launch)."""
        from loom.config import load_config
        from loom.lsp.launch import ServerLaunch
        from loom.session.assembly.sandboxing import make_sandbox

        config = self.config or load_config(self.root, project_root=self.root)
        sandbox = make_sandbox(config, None, self.root)
        return ServerLaunch.for_project(self.root, sandbox=sandbox, trust=config.trust)

    def _lsp_settings(self) -> Any:
        from loom.lsp.supervisor import LspSettings

        if self.config is None:
            return LspSettings()
        return LspSettings.from_section(self.config.lsp)

    async def watch(self, publish: Callable[[Any], None]) -> bool:
        """Keep the index current while the workspace lives ([repo] watch_enabled);
        each change is passed to `publish`. False when not watching."""
        import asyncio
        import logging

        if not self.settings.watch_enabled or self._watcher is not None:
            return False
        loop = asyncio.get_running_loop()

        def start() -> Any:
            from loom.repointel import start_watcher

            return start_watcher(self.root, publish, loop=loop, settings=self.settings)

        self._stopped = False
        try:
            watcher = await asyncio.to_thread(start)  # the first scan can take a while
        except Exception as exc:  # no watcher: the index is refreshed on each use instead
            logging.getLogger(__name__).warning("not watching %s for changes: %s", self.root, exc)
            return False
        if self._stopped:  # the workspace shut down while the first scan ran
            watcher.stop()
            return False
        self._watcher = watcher
        return True

    @property
    def watching(self) -> bool:
        return self._watcher is not None and bool(getattr(self._watcher, "running", True))

    def stop_watching(self) -> None:
        self._stopped = True
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()


def _unconfigured_root(start: Path) -> Path | None:
    """The project root when no config layer exists at all (so defaults apply and
    loading the pydantic config model, ~0.1 s, can be skipped); None otherwise."""
    import os

    from loom.paths import LoomPaths

    if any(
        key.startswith("LOOM_") and key not in ("LOOM_HOME", "LOOM_ALLOW_MODEL_REQUESTS")
        for key in os.environ
    ):
        return None
    if LoomPaths.from_env().user_config_file.exists():
        return None
    for folder in (start, *start.parents):
        if (folder / ".loom.toml").exists():
            return None
        if (folder / ".git").exists():
            return folder
    return start
