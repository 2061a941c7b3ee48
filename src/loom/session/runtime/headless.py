"""The headless permission policy: `loom run` has nobody to ask, so what would ask is
refused with a reason the model reads, and the face hears about it through
`on_refusal(Refusal(...))`, with the reason a person reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loom.session.runtime.policy_wrap import WrappablePolicy, WrappedPolicy

if TYPE_CHECKING:
    from loom.permissions import Verdict


@dataclass(frozen=True)
class Refusal:
    """A call refused in a run without a person, as the face tells the person."""

    tool: str
    subject: str | None  # the command, path or URL, when there is one
    why: str  # the policy's reason ("" when the call only needed approval)
    unattended: bool  # it would have asked: nobody can approve it in a headless run


OnRefusal = Callable[[Refusal], None]

HEADLESS_REASON = (
    "nobody can approve it in a headless run (loom run without --yes); do not retry it, "
    "finish what you can without it and say what is left"
)


class HeadlessPolicy(WrappedPolicy):
    """A policy for runs without a person: what would ask is refused, with a reason the
    model reads, and `on_refusal` hears about it (stderr, the result's denials)."""

    def __init__(self, policy: WrappablePolicy, on_refusal: OnRefusal | None) -> None:
        super().__init__(policy)
        self.on_refusal = on_refusal

    def check(self, tool: Any, args: dict[str, Any]) -> Verdict:
        from loom.permissions import Decision, Verdict

        verdict = self.policy.check(tool, args)
        why, unattended = verdict.reason, verdict.decision is Decision.ASK
        if unattended:
            # keep why it would ask when that says more than "needs your approval"
            why = verdict.reason if verdict.reason != "needs your approval" else ""
            reason = f"{why}; {HEADLESS_REASON}" if why else HEADLESS_REASON
            verdict = Verdict(Decision.DENY, reason, verdict.subject)
        if verdict.decision is Decision.DENY and self.on_refusal is not None:
            self.on_refusal(Refusal(tool.name, verdict.subject, why, unattended))
        return verdict
