"""The options a Workspace's sessions start with: what the configuration says
(`SessionOptions.from_config`, the repo map, checkpoints, hooks), then the fields the
Workspace was told to set over it (tests, benches and embedders: `session_options=`),
then what each session's spec and project add."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.session.runtime.options import SessionOptions

if TYPE_CHECKING:
    from loom.config import LoomConfig
    from loom.repointel.settings import RepoSettings
    from loom.session.workspace.spec import SessionSpec


@dataclass
class SessionDefaults:
    options: SessionOptions
    repo_map: Callable[[Path], Any] | None = None  # project root -> the map hook
    checkpoints: Callable[[Path], Any] | None = None  # project root -> Checkpointer | None

    @classmethod
    def configured(
        cls,
        config: LoomConfig,
        data_dir: Path,
        repo_settings: Callable[[], RepoSettings],
        overrides: Mapping[str, Any] | None = None,
    ) -> SessionDefaults:
        """From the configuration, with `overrides` (SessionOptions fields) on top;
        TypeError names a field SessionOptions does not have."""
        from loom.session.runtime.checkpointing import checkpointer_for

        options = SessionOptions.from_config(config)
        if config.hooks.post_tools:  # after rounds that changed files
            from loom.session.runtime.post_tools import PostToolsCommands

            options.post_tools_hooks = [PostToolsCommands(config.hooks.post_tools)]
        if config.hooks.any_lifecycle():  # loom.hooks (~2 ms of imports) only for a hook
            from loom.hooks import LifecycleHooks

            options.lifecycle_hooks = LifecycleHooks.from_config(config.hooks) or None
        defaults = cls(options)
        if config.repo.map_tokens > 0:
            from loom.session.runtime.repo_map import repointel_hook

            settings = repo_settings()
            defaults.repo_map = lambda root: repointel_hook(root, settings)
        defaults.checkpoints = lambda root: checkpointer_for(root, config, data_dir)
        if overrides:
            defaults.options = replace(options, **overrides)
        return defaults

    def for_session(
        self,
        root: Path,
        spec: SessionSpec,
        *,
        instructions: Any,
        cwd: Path,
        sandbox_summary: tuple[str, str],
    ) -> SessionOptions:
        """One session's options: its project's repo map and checkpoints, its
        instructions, where the person is, and what its spec asks for."""
        options = replace(self.options)
        if options.repo_map is None and self.repo_map is not None:
            options.repo_map = self.repo_map(root)
        if options.checkpointer is None and self.checkpoints is not None:
            options.checkpointer = self.checkpoints(root)
        options.instructions = instructions  # loom.prompts.ProjectInstructions
        options.cwd = cwd
        options.sandbox_summary = sandbox_summary
        if spec.max_turns is not None:  # model requests per user message (`--max-turns`):
            # the Nth response's tool calls are answered "not run" instead of asking again
            options.max_tool_rounds = max(spec.max_turns - 1, 0)
        if spec.effort is not None:  # --effort, a custom agent's `effort:`
            options.effort = spec.effort
        if spec.system_base is not None:  # a custom agent's system text, its brief after
            options.system_base = spec.system_base
            options.extra_system = spec.brief
        elif spec.brief:  # the parent's system text as it is; the brief in the context block
            options.context_brief = spec.brief
        return options


def check_fields(overrides: Mapping[str, Any]) -> None:
    """TypeError naming each key that is not a SessionOptions field."""
    unknown = sorted(set(overrides) - {f.name for f in fields(SessionOptions)})
    if unknown:
        raise TypeError(f"SessionOptions has no field(s) {', '.join(unknown)}")
