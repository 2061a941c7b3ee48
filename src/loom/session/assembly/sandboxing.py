"""The sandbox in a session: build it from config, keep shell commands asking when they
would run unconfined, and report what is enforced (`loom sandbox check`).

Mode "on" with a working sandbox: commands run confined, permissions as usual (--yes
and grants cover shell). Mode "on" without one, or mode "ask": commands run unconfined
and every shell command asks; no grant or --yes covers it (a headless run refuses it,
saying why). Mode "off" (`--no-sandbox`): unconfined, permissions as usual.
While the sandbox keeps the network off, a shell call with `network: true` runs with the
network on for that command alone, once a person approves it (never under --yes alone).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.config import LoomConfig
from loom.paths import LoomPaths
from loom.session.runtime.policy_wrap import WrappablePolicy, WrappedPolicy
from loom.tools.base import subject_kind_of

if TYPE_CHECKING:
    from loom.permissions import Verdict
    from loom.sandbox import Sandbox

NO_SANDBOX_ASK = (
    "no sandbox confines shell commands here, so each one needs a person's approval "
    "(--yes does not cover it)"
)
NO_SANDBOX_HEADLESS = (
    "no sandbox confines shell commands on this machine and nobody can approve this one; "
    "do not retry it. The person can run Loom with --no-sandbox (with --yes) to allow "
    "unconfined commands"
)


def make_sandbox(
    config: LoomConfig, paths: LoomPaths | None = None, project_root: Path | None = None
) -> Sandbox:
    """A `loom.sandbox.Sandbox` for `project_root` (default: the config's); detection
    runs once per process."""
    from loom.sandbox import Sandbox, policy_from_config

    return Sandbox(policy_from_config(config, paths or LoomPaths.from_env(), project_root))


def needs_approval_for_shell(sandbox: Sandbox | None) -> bool:
    return sandbox is not None and not sandbox.active and sandbox.policy.mode != "off"


class UnconfinedShellPolicy(WrappedPolicy):
    """Wraps a permission policy: a shell command that would be allowed without asking
    (a grant, `--yes`, auto_approve) asks instead, because nothing confines it. Headless,
    it is refused with a reason that names the way out (--no-sandbox)."""

    def __init__(self, policy: WrappablePolicy, *, headless: bool) -> None:
        super().__init__(policy)
        self.headless = headless

    def check(self, tool: Any, args: dict[str, Any]) -> Verdict:
        from loom.permissions import Decision, Verdict

        verdict = self.policy.check(tool, args)
        if subject_kind_of(tool) != "command":
            return verdict
        if verdict.decision is Decision.DENY:
            return verdict
        if self.headless:
            return Verdict(Decision.DENY, NO_SANDBOX_HEADLESS, verdict.subject)
        if verdict.decision is Decision.ASK:  # keep its reason (e.g. a dangerous command)
            return Verdict(Decision.ASK, f"{verdict.reason}; {NO_SANDBOX_ASK}", verdict.subject)
        return Verdict(Decision.ASK, NO_SANDBOX_ASK, verdict.subject)


NETWORK_ASK = "asks for network access, which the sandbox keeps off otherwise"
NETWORK_HEADLESS = (
    "this command asks for network access, which the sandbox keeps off, and nobody can "
    "approve it in a headless run; do without the network, or the person can set "
    "`[sandbox] network = true` in their user config"
)


class NetworkRequestPolicy(WrappedPolicy):
    """Wraps a permission policy: a shell command with `network: true` always asks a
    person (neither --yes nor a grant turns the network on by itself); headless, it is
    refused with the way to allow it. Only used while the sandbox keeps the network off."""

    def __init__(self, policy: WrappablePolicy, *, headless: bool) -> None:
        super().__init__(policy)
        self.headless = headless

    def check(self, tool: Any, args: dict[str, Any]) -> Verdict:
        from loom.permissions import Decision, Verdict

        verdict = self.policy.check(tool, args)
        wants_network = isinstance(args, dict) and args.get("network") is True
        if not wants_network or subject_kind_of(tool) != "command":
            return verdict
        if verdict.decision is Decision.DENY:
            return verdict
        if self.headless:
            return Verdict(Decision.DENY, NETWORK_HEADLESS, verdict.subject)
        reason = NETWORK_ASK
        if verdict.decision is Decision.ASK:
            reason = f"{verdict.reason}; {NETWORK_ASK}"
        return Verdict(Decision.ASK, reason, verdict.subject)


def guard_policy(
    policy: WrappablePolicy, sandbox: Sandbox | None, *, headless: bool
) -> WrappablePolicy:
    """The permission policy with the sandbox's rules on top (see the module doc)."""
    if needs_approval_for_shell(sandbox):
        return UnconfinedShellPolicy(policy, headless=headless)
    if sandbox is not None and sandbox.network_requestable:
        return NetworkRequestPolicy(policy, headless=headless)
    return policy


# -- `loom sandbox check` -------------------------------------------------------------------


@dataclass
class SandboxReport:
    mode: str
    backend: str  # "bubblewrap 0.8.0", or "" when none
    problem: str  # why there is no sandbox ("" when there is)
    writable: list[tuple[Path, str]]
    protected: list[Path]
    enforced: list[str]
    probes: list[Any] = field(default_factory=list)  # loom.sandbox.probe.ProbeResult
    missing: list[str] = field(default_factory=list)
    hidden: list[tuple[Path, str]] = field(default_factory=list)
    exposed: list[Path] = field(default_factory=list)  # Loom's own code in a writable folder

    @property
    def holds(self) -> bool:
        return bool(self.backend) and all(probe.passed for probe in self.probes)


def sandbox_report(config: LoomConfig, paths: LoomPaths | None = None) -> SandboxReport:
    """What is enforced for agent commands in this project on this machine, with
    probes that try a write inside, writes outside and a connection under it."""
    from loom.sandbox.policy import exposed_code
    from loom.sandbox.probe import probe_live, run_probes

    sandbox = make_sandbox(config, paths)
    policy = sandbox.policy
    backend = sandbox.backend
    name = ""
    if backend is not None:
        name = f"{backend.name} {backend.version}".strip()
    return SandboxReport(
        mode=policy.mode,
        backend=name,
        problem=sandbox.problem,
        writable=[(root.path, root.why) for root in policy.writable],
        protected=policy.protected_paths(),
        enforced=backend.enforced(policy) if backend is not None else [],
        probes=[*run_probes(backend), *probe_live(backend, policy)] if backend is not None else [],
        missing=list(policy.missing),
        hidden=[(root.path, root.why) for root in policy.hidden],
        exposed=exposed_code(policy.writable_paths()),
    )
