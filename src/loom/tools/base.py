"""The Tool protocol, its context and result, and the registry.

A tool validates its own arguments and raises `ToolError` with a message that tells the
model how to call it right; the session turns that into an error tool result, never a
crash. `risk` feeds the permission decision: "read" tools run freely, "write" and
"execute" tools ask unless granted.

Optional parts a tool may have, read through the functions at the end of this module
(the permission policy reads the first three the same way, by duck typing, as it does not
import this package):
- `subject_kind`: "path" (grants are per file or folder), "command" (per command prefix,
  and the dangerous-command floor applies to `args["command"]`) or "exact" (the default).
- `risk_for(args) -> Risk`: a risk that depends on the arguments (`git status` reads,
  `git commit` writes).
- `protected_reason(args) -> str | None`: why writing this call's path always asks.
- `present(args) -> ToolPresentation`: how faces show a call (loom.tools.presentation).
- `sandbox_status(args) -> (sandboxed, text)`: a tool that runs commands says where.
- `may_change_files = True`: a call that asks nothing but whose work edits (a `task`)
  still gets a checkpoint first.
- `parallel_safe = False`: a read-only tool whose calls must not run at the same time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from loom.llm.base import ToolSpec
from loom.tools.services import EditorFiles, ToolServices

Risk = Literal["read", "write", "execute"]
SubjectKind = Literal["path", "command", "exact"]


class ToolError(Exception):
    """A tool failed in a way the model can fix (bad arguments, missing file, ...)."""


@dataclass
class ToolResult:
    content: str
    is_error: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)


ProgressCallback = Callable[[float | None, str], Awaitable[None] | None]


@dataclass
class ToolContext:
    project_root: Path
    session_id: str = ""
    thread_id: str = ""
    progress: ProgressCallback | None = None
    call_id: str = ""  # the model's id for this call (a sub-agent records it)
    services: ToolServices = field(default_factory=ToolServices)

    async def report(self, fraction: float | None, message: str) -> None:
        if self.progress is not None:
            outcome = self.progress(fraction, message)
            if outcome is not None:
                await outcome


def editor_files(ctx: ToolContext) -> EditorFiles | None:
    return ctx.services.editor_files


@runtime_checkable
class Tool(Protocol):
    """Read-only members: a class attribute, an instance attribute or a property will do."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...  # JSON schema (type: object)

    @property
    def risk(self) -> Risk: ...

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...

    def permission_subject(self, args: dict[str, Any]) -> str | None:
        """What a grant is scoped to: a path for file tools, the command for shell."""
        ...


@dataclass
class ToolSetup:
    """What a tool provider gets for one session. A provider is
    `provide(setup: ToolSetup) -> Iterable[Tool]`, registered in the `loom.tools`
    entry-point group (Loom's own families register the same way); `on_close(cleanup)`
    runs `cleanup()` (sync or async) when the session stops, e.g. to stop a server."""

    project_root: Path
    config: Any  # loom.config.LoomConfig
    paths: Any  # loom.paths.LoomPaths
    session_id: str = ""
    cleanups: list[Callable[[], Awaitable[None] | None]] = field(default_factory=list)
    # how agent commands are launched: the session's sandbox (loom.sandbox.Sandbox), or
    # None to run them as they are (see tools/_launcher.py)
    command_launcher: Any = None

    def on_close(self, cleanup: Callable[[], Awaitable[None] | None]) -> None:
        self.cleanups.append(cleanup)


ToolProvider = Callable[[ToolSetup], Iterable["Tool"]]


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(t.name, t.description, t.parameters) for t in self._tools.values()]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)


# -- the optional parts, typed (see the module docstring) --------------------------------


@runtime_checkable
class RiskByArguments(Protocol):
    def risk_for(self, args: dict[str, Any]) -> Risk: ...


@runtime_checkable
class HasRisk(Protocol):
    risk: Risk


@runtime_checkable
class HasSubjectKind(Protocol):
    subject_kind: SubjectKind


@runtime_checkable
class ReportsSandbox(Protocol):
    def sandbox_status(self, args: dict[str, Any]) -> tuple[bool | None, str]: ...


@runtime_checkable
class MayChangeFiles(Protocol):
    may_change_files: bool


@runtime_checkable
class ParallelSafety(Protocol):
    parallel_safe: bool


# The checks below ask for the one attribute each protocol names, as `isinstance` against
# it would (an attribute present; a method not None) but without `typing`'s protocol
# machinery, which costs ~0.1 ms per check: five of them per tool call were a fifth of
# the agent loop's own time per step.


def _method(tool: object, name: str) -> Any:
    return getattr(tool, name, None)


def risk_of(tool: object, args: dict[str, Any]) -> Risk:
    """The call's risk ("read" tools cannot change files); "execute" when unknown."""
    risk_for = _method(tool, "risk_for")  # RiskByArguments
    if risk_for is not None:
        return risk_for(args)
    risk = getattr(tool, "risk", None)  # HasRisk
    return risk if risk in ("read", "write", "execute") else "execute"


def subject_kind_of(tool: object) -> SubjectKind:
    kind = getattr(tool, "subject_kind", None)  # HasSubjectKind
    return kind if kind in ("path", "command", "exact") else "exact"


def sandbox_status_of(tool: object, args: dict[str, Any]) -> tuple[bool | None, str]:
    """(runs sandboxed, text) for tools that run commands; (None, "") for the others."""
    status = _method(tool, "sandbox_status")  # ReportsSandbox
    return status(args) if status is not None else (None, "")


def may_change_files(tool: object) -> bool:
    return bool(getattr(tool, "may_change_files", False))  # MayChangeFiles


def parallel_safe(tool: object) -> bool:
    return bool(getattr(tool, "parallel_safe", True))  # ParallelSafety
