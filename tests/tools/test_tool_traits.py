"""The optional parts of a tool (risk, subject kind, sandbox status, file changes, parallel
safety) read as `isinstance` against their protocols reads them, for every shape a tool
can give them: a class attribute, an instance attribute, a property, absent, None."""

from __future__ import annotations

from typing import Any

import pytest

from loom.tools import base


class Bare:
    pass


class ClassAttributes:
    risk = "write"
    subject_kind = "path"
    may_change_files = True
    parallel_safe = False


class InstanceAttributes:
    def __init__(self) -> None:
        self.risk = "nonsense"
        self.subject_kind = "command"
        self.may_change_files = False
        self.parallel_safe = True


class Properties:
    @property
    def risk(self) -> str:
        return "read"

    @property
    def parallel_safe(self) -> bool:
        raise AttributeError("not known")  # hasattr() is False: as if absent


class Methods:
    def risk_for(self, args: dict[str, Any]) -> str:
        return "execute" if args.get("run") else "read"

    def sandbox_status(self, args: dict[str, Any]) -> tuple[bool | None, str]:
        return True, "sandboxed"


class NoneMethods:
    risk_for = None
    sandbox_status = None
    risk = "read"


def by_protocol(tool: object, args: dict[str, Any]) -> tuple[Any, ...]:
    """What the protocol checks gave (the former implementation)."""
    if isinstance(tool, base.RiskByArguments):
        risk = tool.risk_for(args)
    else:
        value = tool.risk if isinstance(tool, base.HasRisk) else None
        risk = value if value in ("read", "write", "execute") else "execute"
    kind = "exact"
    if isinstance(tool, base.HasSubjectKind) and tool.subject_kind in ("path", "command", "exact"):
        kind = tool.subject_kind
    sandbox = tool.sandbox_status(args) if isinstance(tool, base.ReportsSandbox) else (None, "")
    changes = isinstance(tool, base.MayChangeFiles) and bool(tool.may_change_files)
    parallel = not isinstance(tool, base.ParallelSafety) or bool(tool.parallel_safe)
    return risk, kind, sandbox, changes, parallel


SHAPES = [Bare(), ClassAttributes(), InstanceAttributes(), Properties(), Methods(), NoneMethods()]


@pytest.mark.parametrize("tool", SHAPES)
@pytest.mark.parametrize("args", [{}, {"run": True}])
def test_traits_read_as_the_protocols_read_them(tool: object, args: dict[str, Any]) -> None:
    assert (
        base.risk_of(tool, args),
        base.subject_kind_of(tool),
        base.sandbox_status_of(tool, args),
        base.may_change_files(tool),
        base.parallel_safe(tool),
    ) == by_protocol(tool, args)
