"""PermissionGate: asks the policy about each tool call, and a person when it says ASK.

ALLOW runs the call; DENY (a deny rule, or an earlier "deny" in this session) answers it
with the reason; ASK flushes the thread to disk, publishes `permission_request` and waits
for `Session.respond_to_permission(action, meta)`. The answer is recorded through
`PermissionPolicy.record` (`allow_always` saves a grant scoped by `meta["scope"]`).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from loom.core import state as sm
from loom.core.errors import NotFound
from loom.core.events import PermissionRequest, SessionError
from loom.core.messages import ToolCall

if TYPE_CHECKING:
    from loom.session.runtime.ports import EventPort, PolicyPort

RESPONSES = ("allow_once", "allow_always", "deny")


class NoPendingPermission(NotFound):
    """An answer came for a permission question that is not (or no longer) asked here."""


class ParentGate:
    """A sub-agent's gate: it checks with the parent's policy, and what would ask is
    asked through the parent's gate, so every face that shows the parent shows the
    question and answers it on the parent. One question of a family at a time."""

    def __init__(self, parent: PermissionGate, label: str) -> None:
        self.parent = parent
        self.label = label  # "sub-agent explore (find the auth code)"
        self.policy = parent.policy
        self._mine: set[str] = set()  # call ids of ours the parent may be asking about

    @property
    def pending(self) -> ToolCall | None:
        return None  # questions wait on the parent

    def respond(self, action: str, meta: dict[str, Any] | None = None) -> None:
        raise NoPendingPermission(f"{self.label} asks through its parent; answer there")

    def cancel(self) -> None:
        asking = self.parent.pending
        if asking is not None and asking.id in self._mine:
            self.parent.cancel()

    async def check(
        self, tool: Any, call: ToolCall, hook_decision: str | None = None, on_behalf: str = ""
    ) -> sm.AgentEvent | None:
        self._mine.add(call.id)
        try:  # a grandchild's call is asked about in its own name
            return await self.parent.check(tool, call, hook_decision, on_behalf or self.label)
        finally:
            self._mine.discard(call.id)


class PermissionGate:
    def __init__(self, session: EventPort, policy: PolicyPort | None) -> None:
        self.session = session
        self.policy = policy
        self._future: asyncio.Future[str] | None = None
        self._call: ToolCall | None = None
        self._meta: dict[str, Any] = {}
        self.family_lock = asyncio.Lock()  # sub-agents' questions, one at a time

    @property
    def pending(self) -> ToolCall | None:
        return self._call if self._future is not None and not self._future.done() else None

    def respond(self, action: str, meta: dict[str, Any] | None = None) -> None:
        if action not in RESPONSES:
            raise ValueError(f"unknown permission answer {action!r}; use one of {RESPONSES}")
        if self._future is None or self._future.done():
            raise NoPendingPermission(
                f"session {self.session.id} is not waiting for a permission answer"
            )
        self._meta = dict(meta or {})
        self._future.set_result(action)

    def cancel(self) -> None:
        if self._future is not None and not self._future.done():
            self._future.cancel()
        self._future, self._call = None, None

    async def check(
        self,
        tool: Any,
        call: ToolCall,
        hook_decision: str | None = None,
        on_behalf: str = "",
    ) -> sm.AgentEvent | None:
        """None when the call may run, else the PermissionDenied event to feed.
        `hook_decision` is a PreToolUse hook's answer: "allow" skips the question only a
        grant would have skipped (the dangerous-command floor, protected files and the
        sandbox's questions still ask); "ask" asks even where the policy allows."""
        if self.policy is None:
            return None
        args = call.arguments_json
        if hook_decision == "allow" and only_a_grant_missing(self.policy, tool, args):
            return None
        verdict = self.policy.check(tool, args)
        decision = verdict.decision.value
        if decision == "allow" and hook_decision == "ask":
            from loom.permissions import Decision, Verdict
            from loom.session.runtime.headless import HEADLESS_REASON, HeadlessPolicy, Refusal

            why = "a PreToolUse hook asks for your approval"
            verdict, decision = Verdict(Decision.ASK, why, verdict.subject), "ask"
            if isinstance(self.policy, HeadlessPolicy):  # nobody to ask
                reason = f"{why}; {HEADLESS_REASON}"
                if self.policy.on_refusal is not None:
                    self.policy.on_refusal(Refusal(call.tool_name, verdict.subject, why, True))
                return sm.PermissionDenied(call.id, verdict.subject, time.time(), reason)
        if decision == "allow":
            return None
        if decision == "deny":
            return sm.PermissionDenied(call.id, verdict.subject, time.time(), verdict.reason)
        async with self.family_lock:  # one question at a time (sub-agents ask through here)
            if hook_decision != "ask":  # an answer given meanwhile may cover this call
                again = self.policy.check(tool, args)
                if again.decision.value != "ask":
                    return await self.check(tool, call, hook_decision, on_behalf)
            return await self._ask(tool, call, verdict, on_behalf)

    async def _ask(
        self, tool: Any, call: ToolCall, verdict: Any, on_behalf: str
    ) -> sm.AgentEvent | None:
        session, args, policy = self.session, call.arguments_json, self.policy
        assert policy is not None  # check() answers at once without a policy
        await session.flush()  # durable before we wait on a person
        hooks = getattr(session, "hooks", None)
        if hooks is not None:
            hooks.notify(f"Loom needs your permission to use {call.tool_name}")
        reason = verdict.reason or ""
        if on_behalf:  # a sub-agent asks through its parent
            reason = f"{on_behalf} asks: {reason}" if reason else f"{on_behalf} asks"
        self._future = asyncio.get_running_loop().create_future()
        self._call, self._meta = call, {}
        sandboxed, sandbox_text = _sandbox_status(tool, args)
        session.publish(
            PermissionRequest(
                session_id=session.id,
                tool_name=call.tool_name,
                tool_path=verdict.subject,
                call_id=call.id,
                arguments=args,
                reason=reason,
                sandboxed=sandboxed,
                sandbox=sandbox_text,
            )
        )
        try:
            answer = await self._future
        finally:
            self._future, self._call = None, None
        try:
            policy.record(tool, args, answer, scope=self._meta.get("scope"))
        except (ValueError, OSError) as exc:
            session.publish(SessionError(session_id=session.id, origin="Io", message=str(exc)))
        if answer == "deny":
            return sm.PermissionDenied(call.id, verdict.subject, time.time())
        return None


def only_a_grant_missing(policy: Any, tool: Any, args: dict[str, Any]) -> bool:
    """The policy allows the call, or would ask only because nothing granted it (not a
    dangerous command, a protected file or an unconfined command). A headless policy is
    asked through the policy it wraps, which would ask where it refuses."""
    from loom.permissions import PLAIN_ASK
    from loom.session.runtime.headless import HeadlessPolicy

    inner = policy.policy if isinstance(policy, HeadlessPolicy) else policy
    verdict = inner.check(tool, args)
    value = verdict.decision.value
    return value == "allow" or (value == "ask" and verdict.reason == PLAIN_ASK)


def _sandbox_status(tool: Any, args: dict[str, Any]) -> tuple[bool | None, str]:
    """(runs sandboxed, text) for tools that run commands; (None, "") for the others."""
    from loom.tools.base import sandbox_status_of

    sandboxed, text = sandbox_status_of(tool, args)
    return (None, "") if sandboxed is None else (bool(sandboxed), str(text))


Gate = PermissionGate | ParentGate  # what a session asks through
