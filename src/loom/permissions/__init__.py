"""Permissions: may a tool call run, must a person be asked, or is it refused?

policy = PermissionPolicy(GrantStore(project_root), auto_approve_tools={"file_write"})
policy.decide(tool, args)                    # Decision.ALLOW / ASK / DENY
policy.record(tool, args, "allow_always")    # saves a scoped grant in loom.db
"""

from loom.permissions.dangerous import dangerous_reason
from loom.permissions.grants import Grant, GrantStore
from loom.permissions.policy import (
    PLAIN_ASK,
    RESPONSES,
    Decision,
    DenyRule,
    PermissionPolicy,
    Verdict,
)
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
