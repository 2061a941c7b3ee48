"""The permission decision: may this tool call run now, must we ask, or is it refused?

Order of the rules (first match wins):
1. deny: a configured deny rule, or a `deny` answer earlier in this session -> DENY.
   In plan mode (`modes.py`), a call that is not read-only -> DENY, telling the model
   it is planning (read-only shell commands, `read_only.py`, go on to the rules below).
2. the dangerous floor (shell commands in `dangerous.py`) -> ASK, or DENY when the policy
   is built with `dangerous="deny"`. No grant, auto-approved tool or `auto_approve_all`
   covers these: a person sees every one of them.
   Writes to files that decide what git or Loom runs (`.git/`, `.loom.toml`, ...: the
   tool's `protected_reason(args)`) -> ASK, with that reason, whatever else applies.
3. read-risk tools -> ALLOW.
4. bypassPermissions mode (`auto_approve_all`, `--yes`), or the tool is in
   `auto_approve_tools` -> ALLOW; acceptEdits mode and a file edit inside the project
   -> ALLOW.
5. a saved `allow_always` grant covers the call -> ALLOW.
6. otherwise -> ASK.

Tools are read by duck typing (`name`, `risk`, optional `risk_for(args)`,
`permission_subject(args)`, `subject_kind`), so this package does not import `tools`.
"""

from __future__ import annotations

import enum
import logging
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

from loom.core.clock import now_iso
from loom.permissions.grants import Grant, GrantStore, ScopeKind
from loom.permissions.modes import PLAN_REFUSAL, PermissionMode, parse_permission_mode

# The shell analysis (the bash parser, wrappers, the dangerous floor: ~5 ms of imports)
# loads when the policy first judges a command, not when a session starts: `loom run`'s
# first request needs the policy built, never a command judged (tests/cli/test_run_startup.py).

log = logging.getLogger(__name__)

Response = Literal["allow_once", "allow_always", "deny"]
RESPONSES: tuple[str, ...] = ("allow_once", "allow_always", "deny")
SubjectKind = Literal["path", "command", "exact"]


class Decision(enum.Enum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


PLAIN_ASK = "needs your approval"  # the reason when only a grant would have allowed it


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    reason: str
    subject: str | None


@dataclass(frozen=True)
class DenyRule:
    """Refuse calls of tools matching `tool` whose subject matches `pattern` (globs).

    `DenyRule.parse("shell:rm *")`, `DenyRule.parse("file_write:secrets/*")`,
    `DenyRule.parse("git")` (the whole tool)."""

    tool: str
    pattern: str = "*"

    @classmethod
    def parse(cls, text: str) -> DenyRule:
        tool, _, pattern = text.partition(":")
        if not tool.strip():
            raise ValueError(f"deny rule {text!r} names no tool; write `tool` or `tool:pattern`")
        return cls(tool.strip(), pattern.strip() or "*")

    def matches(self, tool: str, subject: str | None, command: str | None) -> bool:
        from loom.permissions.shell_rules import normalize_command, parse_command

        if not fnmatchcase(tool, self.tool):
            return False
        if self.pattern == "*":
            return True
        candidates = [subject or ""]
        if command is not None:  # each part of `a; b | c` is judged on its own too
            candidates.append(normalize_command(command))
            candidates += [" ".join(c.words) for c in parse_command(command).commands]
        return any(fnmatchcase(c, self.pattern) for c in candidates)


def _subject(tool: Any, args: dict[str, Any]) -> str | None:
    getter = getattr(tool, "permission_subject", None)
    try:
        return getter(args) if getter is not None else None
    except Exception:  # bad args: the tool itself will report them when it runs
        return None


def _risk(tool: Any, args: dict[str, Any]) -> str:
    risk_for = getattr(tool, "risk_for", None)
    if risk_for is not None:
        try:
            return risk_for(args)
        except Exception:
            pass
    return getattr(tool, "risk", "execute")


def _protected(tool: Any, args: dict[str, Any]) -> str | None:
    getter = getattr(tool, "protected_reason", None)
    if getter is None:
        return None
    try:
        return getter(args)
    except Exception:  # bad args: the tool itself reports them when it runs
        return None


def _subject_kind(tool: Any) -> SubjectKind:
    kind = getattr(tool, "subject_kind", None)
    if kind in ("path", "command", "exact"):
        return kind
    return "command" if getattr(tool, "name", "") in {"shell", "bash"} else "exact"


def _command(tool: Any, args: dict[str, Any]) -> str | None:
    if _subject_kind(tool) != "command":
        return None
    command = args.get("command") if isinstance(args, dict) else None
    return command if isinstance(command, str) else None


class PermissionPolicy:
    def __init__(
        self,
        grants: GrantStore,
        *,
        auto_approve_tools: Iterable[str] = (),
        deny_rules: Iterable[DenyRule | str] = (),
        auto_approve_all: bool = False,
        dangerous: Literal["ask", "deny"] = "ask",
        mode: str = "default",
    ) -> None:
        if dangerous not in ("ask", "deny"):
            raise ValueError(f"dangerous must be 'ask' or 'deny', not {dangerous!r}")
        self.grants = grants
        self.auto_approve_tools = set(auto_approve_tools)
        self.deny_rules = [r if isinstance(r, DenyRule) else DenyRule.parse(r) for r in deny_rules]
        self.mode: PermissionMode = parse_permission_mode(mode)
        if auto_approve_all:
            self.mode = "bypassPermissions"
        self.dangerous = dangerous
        self._session_denies: set[tuple[str, str | None]] = set()
        self._session_grants: list[Grant] = []  # used only when the database is unusable

    @property
    def auto_approve_all(self) -> bool:
        return self.mode == "bypassPermissions"

    def set_mode(self, mode: str) -> PermissionMode:
        """Switch to `mode` (ValueError for an unknown name); returns it."""
        self.mode = parse_permission_mode(mode)
        return self.mode

    # -- deciding ------------------------------------------------------------------

    def decide(self, tool: Any, args: dict[str, Any]) -> Decision:
        return self.check(tool, args).decision

    def check(self, tool: Any, args: dict[str, Any]) -> Verdict:
        """The decision with a reason a person can read (shown in permission prompts)."""
        from loom.permissions.dangerous import dangerous_reason
        from loom.permissions.shell_rules import normalize_command

        name = tool.name
        subject = _subject(tool, args)
        command = _command(tool, args)
        key = normalize_command(command) if command is not None else subject
        for rule in self.deny_rules:
            if rule.matches(name, subject, command):
                return Verdict(Decision.DENY, f"denied by rule {rule.tool}:{rule.pattern}", subject)
        if (name, key) in self._session_denies or (name, None) in self._session_denies:
            return Verdict(Decision.DENY, "denied earlier in this session", subject)
        if self.mode == "plan" and not _plan_allows(tool, args, command):
            return Verdict(Decision.DENY, PLAN_REFUSAL, subject)
        if command is not None:
            danger = dangerous_reason(command)
            if danger:
                decision = Decision.DENY if self.dangerous == "deny" else Decision.ASK
                return Verdict(decision, f"dangerous command: {danger}", subject)
        protected = _protected(tool, args)
        if protected:
            why = f"writing {protected}. This always asks, whatever is auto-approved or granted"
            return Verdict(Decision.ASK, why, subject)
        if _risk(tool, args) == "read":
            return Verdict(Decision.ALLOW, "read-only tool", subject)
        if self.auto_approve_all:
            return Verdict(Decision.ALLOW, "auto-approve is on for this session", subject)
        if self.mode == "acceptEdits" and _edit_inside_project(tool, subject):
            return Verdict(Decision.ALLOW, "acceptEdits mode: file edits run unasked", subject)
        if any(fnmatchcase(name, rule) for rule in self.auto_approve_tools):  # mcp__github__*
            return Verdict(Decision.ALLOW, f"{name} is auto-approved in config", subject)
        grant = self._covering_grant(tool, name, subject, command)
        if grant is not None:
            return Verdict(Decision.ALLOW, f"allowed always: {grant.describe()}", subject)
        return Verdict(Decision.ASK, PLAIN_ASK, subject)

    def _grants_for(self, name: str) -> list[Grant]:
        saved: list[Grant] = []
        try:
            saved = self.grants.for_tool(name)
        except (sqlite3.Error, OSError) as exc:
            log.warning("could not read permission grants (%s); asking instead", exc)
        return saved + [g for g in self._session_grants if g.tool == name]

    def _covering_grant(
        self, tool: Any, name: str, subject: str | None, command: str | None
    ) -> Grant | None:
        from loom.permissions.shell_rules import covered_by_prefixes, normalize_command

        grants = self._grants_for(name)
        for grant in grants:
            if grant.scope_kind == "any":
                return grant
            if command is not None:
                if grant.scope_kind == "exact" and grant.scope == normalize_command(command):
                    return grant
                continue
            if subject is None:
                continue
            if grant.scope_kind in ("path", "exact") and grant.scope == subject:
                return grant
            if grant.scope_kind == "dir" and _under(subject, grant.scope):
                return grant
        if command is not None:
            prefixes = [g for g in grants if g.scope_kind == "prefix"]
            if prefixes and covered_by_prefixes(command, [g.scope for g in prefixes]):
                return prefixes[0]
        return None

    # -- recording answers ---------------------------------------------------------

    def scope_for(
        self, tool: Any, args: dict[str, Any], scope: str | None = None
    ) -> tuple[ScopeKind, str]:
        """What an `allow_always` for this call would cover. `scope` overrides the default:
        `*` (every call), a folder ending in `/` (file tools), or a command prefix."""
        from loom.permissions.shell_rules import command_prefix, normalize_command, prefix_refusal

        kind = _subject_kind(tool)
        subject = _subject(tool, args)
        command = _command(tool, args)
        if scope is not None and scope.strip() in ("*", ""):
            return "any", "*"
        if kind == "command" and command is not None:
            if scope is not None and prefix_refusal(scope) is None:
                return "prefix", normalize_command(scope)
            prefix = command_prefix(command)  # an interpreter alone: this command only
            return ("prefix", prefix) if prefix else ("exact", normalize_command(command))
        if scope is not None:
            if kind == "path" and scope.endswith("/"):
                return "dir", scope
            return ("path" if kind == "path" else "exact"), scope
        if subject is None:
            return "any", "*"
        return ("path" if kind == "path" else "exact"), subject

    def record(
        self, tool: Any, args: dict[str, Any], response: str, *, scope: str | None = None
    ) -> Grant | None:
        """Remember a person's answer. `allow_always` saves a grant (returned); `deny`
        refuses the same call for the rest of this session; `allow_once` keeps nothing, and
        so does `allow_always` for a command on the dangerous floor (it always asks)."""
        from loom.permissions.dangerous import dangerous_reason
        from loom.permissions.shell_rules import normalize_command

        if response not in RESPONSES:
            raise ValueError(f"unknown permission response {response!r}; use one of {RESPONSES}")
        name = tool.name
        if response == "deny":
            command = _command(tool, args)
            key = normalize_command(command) if command is not None else _subject(tool, args)
            self._session_denies.add((name, key))
            return None
        if response == "allow_once":
            return None
        if _protected(tool, args):
            return None  # it always asks: a grant would never apply
        command = _command(tool, args)
        if command is not None and dangerous_reason(command):
            # The floor always asks, so a grant could never apply to this command; and a
            # prefix grant (`rm`) would quietly widen to every other `rm`. Keep nothing.
            return None
        kind, value = self.scope_for(tool, args, scope)
        try:
            return self.grants.add(name, kind, value)
        except (sqlite3.Error, OSError) as exc:
            log.warning("could not save the grant (%s); it lasts for this session only", exc)
            grant = Grant(0, self.grants.project_root or "", name, kind, value, now_iso())
            self._session_grants.append(grant)
            return grant


def _plan_allows(tool: Any, args: dict[str, Any], command: str | None) -> bool:
    """May this call run in plan mode: a read-only tool, or a read-only shell command."""
    from loom.permissions.read_only import read_only_command

    if _risk(tool, args) == "read":
        return True
    return command is not None and read_only_command(command)


def _edit_inside_project(tool: Any, subject: str | None) -> bool:
    """A file tool's write to a relative path that stays in the project (the tool itself
    refuses a path that resolves outside it)."""
    if _subject_kind(tool) != "path" or getattr(tool, "risk", "") != "write" or not subject:
        return False
    return not subject.startswith(("/", "~")) and ".." not in subject.split("/")


def _under(path: str, folder: str) -> bool:
    folder = folder.strip("/")
    if folder in ("", "."):
        return True
    return path == folder or path.startswith(folder + "/")
