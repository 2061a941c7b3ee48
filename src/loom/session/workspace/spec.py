"""What a face asks for when it starts a session, and what it is told about running ones."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from loom.session.runtime.headless import OnRefusal

if TYPE_CHECKING:
    from loom.mcp_client import ServerSpec
    from loom.session.runtime.options import PlanApproval
    from loom.session.runtime.session import Session
    from loom.tools.base import Tool
    from loom.tools.services import EditorFiles


@dataclass(frozen=True)
class ParentLink:
    """A sub-agent's place in its family: the session that started it (its permissions
    and sandbox are the child's, never more) and the `task` call it answers."""

    session: Session  # the parent
    call_id: str
    agent: str = ""  # the agent definition's name
    depth: int = 1  # the person's session is 0


@dataclass(frozen=True)
class SessionSpec:
    """What a face asks for when it starts (or resumes) a session."""

    model: str | None = None  # provider:model-id; None: model.default (resumed: the thread's)
    thread: str | None = None  # id or unique prefix of a thread to continue
    private: bool = False  # the thread never syncs
    mode: Literal["normal", "architect"] = "normal"
    max_turns: int | None = None  # model requests per user message (loom run --max-turns)
    effort: str | None = None  # --effort / an agent's `effort:`; None: model.effort
    auto_approve: bool = False  # --yes: every tool but the dangerous-command floor runs
    # default | acceptEdits | plan | bypassPermissions (loom.permissions.modes); --yes
    # makes it bypassPermissions
    permission_mode: str = "default"
    headless: bool = False  # nobody can answer: what would ask is refused
    on_refusal: OnRefusal | None = None  # called with a Refusal for each refused call
    cwd: Path | None = None  # where the person is (LOOM.md lookup); default: here
    extra_tools: Sequence[Tool] = ()  # tools this face adds for this session only
    title: str | None = None
    # MCP servers for this session only, beside [mcp.servers.*] and .mcp.json (ACP
    # session/new `mcpServers`: dicts with name + command/args/env or url/headers)
    mcp_servers: Sequence[Any] = ()
    on_mcp_notice: Callable[[str], None] | None = None  # a line per server problem; else events
    # the face asks the person about the project's unapproved MCP servers itself (REPL,
    # web banner, ACP): no "not started, run loom mcp approve" line for them
    asks_mcp_approval: bool = False
    # architect mode: the face asks the person about each plan (the REPL); None: carried
    # out at once (SessionOptions.plan_approval)
    plan_approval: PlanApproval | None = None
    # an editor's files (ACP fs/*): the session's id -> what its file tools read and
    # write through; None: the disk
    editor_files: Callable[[str], EditorFiles | None] | None = None
    # -- a sub-agent (the `task` tool; loom.session.subagents) ---------------------------
    parent: ParentLink | None = None  # set: a child session of `parent.session`
    tools: Sequence[str] | None = None  # only these tools (exact names); None: all
    system_base: str | None = None  # a custom agent's text in place of the family prompt
    brief: str = ""  # more system text (what a sub-agent is told about its role)
    root: Path | None = None  # work here (a worktree) instead of the project root


@dataclass(frozen=True)
class ActiveSession:
    id: str
    thread_id: str
    title: str
    status: str
    model: str
    mode: str
    parent_id: str | None = None  # a sub-agent's: the session that started it


@dataclass(frozen=True)
class McpServerAsk:
    """A project-defined MCP server waiting for the person's approval: it starts a
    program the repository chose (`command`), so a face shows it before asking."""

    name: str
    source: str  # where it is defined: .mcp.json, .loom.toml
    command: str  # what it runs, in words: the command line or the URL
    # everything approving it lets it do, one line each: the command and its args, cwd,
    # env (values masked when secret-like), url, headers (masked; `${VAR}` named)
    details: tuple[str, ...] = ()

    @classmethod
    def of(cls, spec: ServerSpec) -> McpServerAsk:
        return cls(spec.name, str(spec.source), spec.describe(), tuple(spec.details()))
