"""SessionOptions: the knobs of a session that are not part of seed 001's API."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loom.llm.retry import RetryPolicy
from loom.session.context import RepoMapHook


@dataclass
class SessionOptions:
    tool_timeout: float | None = 120.0  # seconds; a hung tool becomes an error result
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_tool_rounds: int = 200  # model responses with tool calls in one turn
    reserved_output_tokens: int = 8192  # context.reserved_output_tokens
    max_context_tokens: int | None = None  # None: the model catalog's window
    rules: str | None = None  # None: read LOOM.md from the project
    rules_max_tokens: int = 4000
    repo_map: RepoMapHook | None = None  # (budget, focus files, identifiers) -> map text
    repo_map_tokens: int = 1024  # config repo.map_tokens; 0 turns the map off
    repo_map_timeout: float = 10.0  # seconds; a slower map is skipped for that call
    system_prompt: str | None = None  # None: loom.session.prompt's default
    architect_model: str = "anthropic:claude-opus-4-6"  # config model.architect
    editor_model: str = "anthropic:claude-haiku-4-5"  # config model.editor
    architect_plan_attempts: int = 3  # asks again this often when the plan is not JSON
    git_snapshot: bool = True  # after every tool that can change the tree, and at stop
    post_tools_hooks: list[Callable[[Any], Any]] = field(default_factory=list)
    compaction: bool = False  # summarise old turns with the fast model (context.compaction)
    auto_commit: bool = False  # [git] auto_commit: commit the turn's changes when it ends
    checkpointer: Any = None  # loom.session.checkpointing.Checkpointer: snapshots for undo
    tool_extras: dict[str, Any] = field(default_factory=dict)  # ToolContext.extras
