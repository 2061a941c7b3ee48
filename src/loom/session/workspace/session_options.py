"""The options a Workspace's sessions start with: what the configuration says
(`SessionOptions.from_config`, the repo map, checkpoints, hooks), then the fields the
Workspace was told to set over it (tests, benches and embedders: `session_options=`),
then what each session's spec and project add."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.session.runtime.options import PostToolsHook, SessionOptions
from loom.tools.services import ToolServices

if TYPE_CHECKING:
    from loom.config import LoomConfig
    from loom.prompts import ProjectInstructions
    from loom.repointel.settings import RepoSettings
    from loom.session.runtime.checkpointing import Checkpointer
    from loom.session.runtime.context import RepoMapHook
    from loom.session.workspace.spec import SessionSpec
    from loom.store.images import ImageStore


@dataclass
class SessionDefaults:
    options: SessionOptions
    repo_map: Callable[[Path], RepoMapHook] | None = None  # project root -> the map hook
    checkpoints: Callable[[Path], Checkpointer | None] | None = None  # project root -> one

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

            options = replace(
                options, post_tools_hooks=(PostToolsCommands(config.hooks.post_tools),)
            )
        if config.hooks.any_lifecycle():  # loom.hooks (~2 ms of imports) only for a hook
            from loom.hooks import LifecycleHooks

            options = replace(
                options, lifecycle_hooks=LifecycleHooks.from_config(config.hooks) or None
            )
        if overrides:
            options = replace(options, **overrides)
        repo_map: Callable[[Path], RepoMapHook] | None = None
        if config.repo.map_tokens > 0:
            from loom.session.runtime.repo_map import repointel_hook

            settings = repo_settings()
            repo_map = partial(repointel_hook, settings=settings)
        return cls(options, repo_map, lambda root: checkpointer_for(root, config, data_dir))

    def for_session(
        self,
        root: Path,
        spec: SessionSpec,
        *,
        instructions: ProjectInstructions | None,
        cwd: Path,
        sandbox_summary: tuple[str, str],
        parts: SessionParts | None = None,
    ) -> SessionOptions:
        """One session's options, whole: its project's repo map and checkpoints, its
        instructions, where the person is, what its spec asks for, and the parts the
        Workspace built for it (`parts`: images, the decision graph, tool services)."""
        options = self.options
        changes: dict[str, Any] = {
            "instructions": instructions,
            "cwd": cwd,
            "sandbox_summary": sandbox_summary,
        }
        if options.repo_map is None and self.repo_map is not None:
            changes["repo_map"] = self.repo_map(root)
        if options.checkpointer is None and self.checkpoints is not None:
            changes["checkpointer"] = self.checkpoints(root)
        if spec.max_turns is not None:  # model requests per user message (`--max-turns`):
            # the Nth response's tool calls are answered "not run" instead of asking again
            changes["max_tool_rounds"] = max(spec.max_turns - 1, 0)
        if spec.effort is not None:  # --effort, a custom agent's `effort:`
            changes["effort"] = spec.effort
        if spec.system_base is not None:  # a custom agent's system text, its brief after
            changes["system_base"] = spec.system_base
            changes["extra_system"] = spec.brief
        elif spec.brief:  # the parent's system text as it is; the brief in the context block
            changes["context_brief"] = spec.brief
        if spec.plan_approval is not None:  # the face asks about architect plans
            changes["plan_approval"] = spec.plan_approval
        if parts is not None:
            changes["image_store"] = parts.image_store
            changes["tool_services"] = parts.tool_services
            if parts.decision_context is not None:
                changes["decision_context"] = parts.decision_context
            changes["post_tools_hooks"] = (*options.post_tools_hooks, *parts.post_tools_hooks)
        return replace(options, **changes)


@dataclass(frozen=True)
class SessionParts:
    """What the Workspace builds for one session before it exists (`start_session`)."""

    tool_services: ToolServices = field(default_factory=ToolServices)
    image_store: ImageStore | None = None
    decision_context: Callable[[int], str] | None = None
    post_tools_hooks: tuple[PostToolsHook, ...] = ()


def check_fields(overrides: Mapping[str, Any]) -> None:
    """TypeError naming each key that is not a SessionOptions field."""
    unknown = sorted(set(overrides) - {f.name for f in fields(SessionOptions)})
    if unknown:
        raise TypeError(f"SessionOptions has no field(s) {', '.join(unknown)}")
