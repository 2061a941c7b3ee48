"""The permission policy of a session, as configured: [permissions] rules and grants,
the sandbox's rules on top, and the headless variant (loom.session.runtime.headless)
for runs nobody can answer."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from loom.core.errors import SetupError
from loom.session.runtime.headless import HeadlessPolicy, OnRefusal

if TYPE_CHECKING:
    from loom.config import LoomConfig
    from loom.sandbox import Sandbox
    from loom.session.runtime.policy_wrap import WrappablePolicy


def permission_policy(
    config: LoomConfig,
    database: Path,
    project_root: Path,
    *,
    auto_approve: bool = False,
    permission_mode: str = "default",
    headless: bool = False,
    on_refusal: OnRefusal | None = None,
    sandbox: Sandbox | None = None,
) -> WrappablePolicy:
    """The policy [permissions] configures, with the sandbox's rules on top (unconfined
    shell commands and commands asking for the network ask a person; see
    loom.session.assembly.sandboxing); SetupError for a malformed deny rule."""
    from loom.permissions import GrantStore, PermissionPolicy
    from loom.session.assembly.sandboxing import guard_policy

    try:
        policy = PermissionPolicy(
            GrantStore(project_root, database=database),
            auto_approve_tools=config.permissions.auto_approve,
            deny_rules=config.permissions.deny,
            auto_approve_all=auto_approve,
            mode=permission_mode,
            # nobody is there to see a dangerous command in a headless run: refuse it
            dangerous="deny" if headless else "ask",
        )
    except ValueError as exc:  # a malformed deny rule, or an unknown mode
        where = "--permission-mode" if "permission mode" in str(exc) else "[permissions] deny"
        raise SetupError(f"{where}: {exc}") from exc
    policy = guard_policy(policy, sandbox, headless=headless)
    if headless:
        return HeadlessPolicy(policy, on_refusal)
    return policy
