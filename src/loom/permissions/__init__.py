"""Permissions: may a tool call run, must a person be asked, or is it refused?

policy = PermissionPolicy(GrantStore(project_root), auto_approve_tools={"file_write"})
policy.decide(tool, args)                    # Decision.ALLOW / ASK / DENY
policy.record(tool, args, "allow_always")    # saves a scoped grant in loom.db
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom._lazy import lazy_attributes as _lazy_attributes
from loom.permissions.grants import Grant, GrantStore
from loom.permissions.policy import (
    PLAIN_ASK,
    RESPONSES,
    Decision,
    DenyRule,
    PermissionPolicy,
    Verdict,
)

if TYPE_CHECKING:
    from loom.permissions.dangerous import dangerous_reason
    from loom.permissions.shell_rules import command_prefix, covered_by_prefixes

__all__ = [
    "PLAIN_ASK",
    "RESPONSES",
    "Decision",
    "DenyRule",
    "Grant",
    "GrantStore",
    "PermissionPolicy",
    "Verdict",
    "command_prefix",
    "covered_by_prefixes",
    "dangerous_reason",
]

# The shell analysis loads at first use (PEP 562; see loom.permissions.policy).
_LAZY = {
    "command_prefix": "loom.permissions.shell_rules",
    "covered_by_prefixes": "loom.permissions.shell_rules",
    "dangerous_reason": "loom.permissions.dangerous",
}


__getattr__ = _lazy_attributes(__name__, _LAZY, globals())
