"""What a session lends its tools beside the project root: `ToolContext.services`.

Each field is one named, optional collaborator, typed by a small protocol here because
the classes that fill them sit on higher floors (`loom.decisions`, `loom.repointel`,
`loom.lsp`, `loom.session`; this package must not import them). A tool narrows the field
to the class it works with (`isinstance`) and says what it does without one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class EditorFiles(Protocol):
    """Files as an editor sees them (ACP `fs/read_text_file`, `fs/write_text_file`): a
    face that drives Loom from an editor gives one (`SessionSpec.editor_files`) so file
    tools read unsaved buffers and land edits in them. Paths are absolute and already
    confined to the project by the tool. `None`/`False`: use the disk."""

    async def read_text(self, path: Path) -> str | None: ...

    async def write_text(self, path: Path, text: str) -> bool: ...


class DecisionGraph(Protocol):
    """The session's decision graph: `loom.decisions.recorder.DecisionRecorder`."""

    @property
    def workspace_root(self) -> str | None: ...


class RepoIndex(Protocol):
    """The project's repo intelligence: `loom.repointel.service.RepoIntel`."""

    def relative(self, path: str) -> str: ...


class LanguageServers(Protocol):
    """The language servers the tools ask: `loom.lsp.supervisor.LspSupervisor`."""

    def server_key(self, path: Path) -> str: ...


class Delegation(Protocol):
    """Runs the `task` tool's sub-agents: `loom.session.workspace.subagents.SubagentRunner`
    (the task tool calls it through `loom.delegation.task_tool.SubagentRunner`)."""

    depth: int  # the session's own: 0 for a person's session
    max_depth: int


@dataclass(frozen=True)
class ToolServices:
    """A session's collaborators for its tools; each None when it has none."""

    decisions: DecisionGraph | None = None
    repointel: RepoIndex | None = None
    lsp_supervisor: LanguageServers | None = None
    subagents: Delegation | None = None
    editor_files: EditorFiles | None = None
