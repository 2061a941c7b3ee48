"""A permission policy wrapped by another: the headless one (`headless.py`) and the
sandbox's (`loom.session.assembly.sandboxing`) change what `check` says and pass the rest
(the mode, the grants, answers, what a grant would cover) to the policy they wrap, each
by name (no `__getattr__`: what a wrapper offers is what the type checker sees)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from loom.permissions import Decision, Grant, GrantStore, Verdict
    from loom.permissions.grants import ScopeKind
    from loom.permissions.modes import PermissionMode


class WrappablePolicy(Protocol):
    """`loom.permissions.PermissionPolicy`, or a `WrappedPolicy` around one."""

    @property
    def mode(self) -> PermissionMode: ...

    @property
    def grants(self) -> GrantStore: ...

    def set_mode(self, mode: str) -> PermissionMode: ...

    def check(self, tool: Any, args: dict[str, Any]) -> Verdict: ...

    def record(
        self, tool: Any, args: dict[str, Any], response: str, *, scope: str | None = None
    ) -> Grant | None: ...

    def scope_for(
        self, tool: Any, args: dict[str, Any], scope: str | None = None
    ) -> tuple[ScopeKind, str]: ...


class WrappedPolicy:
    """Passes everything to `policy`; a subclass overrides `check`."""

    def __init__(self, policy: WrappablePolicy) -> None:
        self.policy = policy

    @property
    def mode(self) -> PermissionMode:
        return self.policy.mode

    @property
    def grants(self) -> GrantStore:  # the person's saved answers
        return self.policy.grants

    def set_mode(self, mode: str) -> PermissionMode:
        return self.policy.set_mode(mode)

    def check(self, tool: Any, args: dict[str, Any]) -> Verdict:
        return self.policy.check(tool, args)

    def decide(self, tool: Any, args: dict[str, Any]) -> Decision:
        return self.check(tool, args).decision

    def record(
        self, tool: Any, args: dict[str, Any], response: str, *, scope: str | None = None
    ) -> Grant | None:
        return self.policy.record(tool, args, response, scope=scope)

    def scope_for(
        self, tool: Any, args: dict[str, Any], scope: str | None = None
    ) -> tuple[ScopeKind, str]:
        return self.policy.scope_for(tool, args, scope)
