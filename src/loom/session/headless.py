"""The permission policy of a session: configured rules, and the headless variant.

`loom run` has nobody to ask: what would ask is refused with a reason the model reads,
and the face hears about it through `on_refusal(tool, subject, why)`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.core.errors import SetupError

if TYPE_CHECKING:
    from loom.config import LoomConfig
    from loom.permissions import Verdict

OnRefusal = Callable[[str, str | None, str], None]

HEADLESS_REASON = (
    "nobody can approve it in a headless run (loom run without --yes); do not retry it, "
    "finish what you can without it and say what is left"
)


def build_policy(
    config: LoomConfig,
    database: Path,
    project_root: Path,
    *,
    auto_approve: bool = False,
    headless: bool = False,
    on_refusal: OnRefusal | None = None,
    sandbox: Any = None,
) -> Any:
    """The policy [permissions] configures, with the sandbox's rules on top (unconfined
    shell commands and commands asking for the network ask a person; see
    loom.session.sandboxing); SetupError for a malformed deny rule."""
    from loom.permissions import GrantStore, PermissionPolicy
    from loom.session.sandboxing import guard_policy

    try:
        policy = PermissionPolicy(
            GrantStore(project_root, database=database),
            auto_approve_tools=config.permissions.auto_approve,
            deny_rules=config.permissions.deny,
            auto_approve_all=auto_approve,
            # nobody is there to see a dangerous command in a headless run: refuse it
            dangerous="deny" if headless else "ask",
        )
    except ValueError as exc:  # a malformed deny rule
        raise SetupError(f"[permissions] deny: {exc}") from exc
    policy = guard_policy(policy, sandbox, headless=headless)
    if headless:
        return HeadlessPolicy(policy, on_refusal)
    return policy


class HeadlessPolicy:
    """A policy for runs without a person: what would ask is refused, with a reason the
    model reads, and `on_refusal` hears about it (stderr, the result's denials)."""

    def __init__(self, policy: Any, on_refusal: OnRefusal | None) -> None:
        self.policy = policy
        self.on_refusal = on_refusal

    def check(self, tool: Any, args: dict[str, Any]) -> Verdict:
        from loom.permissions import Decision, Verdict

        verdict = self.policy.check(tool, args)
        if verdict.decision is Decision.ASK:
            # keep why it would ask when that says more than "needs your approval"
            why = verdict.reason if verdict.reason != "needs your approval" else ""
            reason = f"{why}; {HEADLESS_REASON}" if why else HEADLESS_REASON
            verdict = Verdict(Decision.DENY, reason, verdict.subject)
        if verdict.decision is Decision.DENY and self.on_refusal is not None:
            self.on_refusal(tool.name, verdict.subject, verdict.reason)
        return verdict

    def decide(self, tool: Any, args: dict[str, Any]) -> Any:
        return self.check(tool, args).decision

    def record(self, *args: Any, **kwargs: Any) -> None:
        self.policy.record(*args, **kwargs)
