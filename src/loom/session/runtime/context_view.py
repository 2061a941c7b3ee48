"""Where the context window goes (`/context`): the tokens of each part of the request the
session would send next, from the same pieces the model call builds it from
(`LlmCaller.preview`: the system text, the tools, the repo map and decision zone for
this call, the history as sent) and with the same offline counter the window uses, plus
one suggestion when a part is large. Faces only render it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from loom.llm.tokens import estimate_tokens, estimate_tool_specs_tokens
from loom.session.runtime.context import BuiltContext

LARGE_SHARE = 0.25  # a part above this share of the window gets a suggestion
MCP_PREFIX = "mcp__"


@dataclass(frozen=True)
class ContextPart:
    key: str  # system, tools, tools:mcp:NAME, instructions, repo_map, decisions, ...
    label: str
    tokens: int


@dataclass(frozen=True)
class ContextView:
    model: str
    window: int
    parts: tuple[ContextPart, ...]  # they add up to `window`, "free" last
    suggestion: str | None

    def share(self, part: ContextPart) -> float:
        return part.tokens / self.window if self.window else 0.0

    def percent(self, part: ContextPart) -> float:
        return round(100 * self.share(part), 1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "window": self.window,
            "parts": [
                {"key": p.key, "label": p.label, "tokens": p.tokens, "percent": self.percent(p)}
                for p in self.parts
            ],
            "suggestion": self.suggestion,
        }


def tool_groups(specs: Sequence[Any]) -> list[tuple[str, str, list[Any]]]:
    """(key, label, specs) per source: Loom's own tools first, then one per MCP server
    (`mcp__<server>__<tool>`)."""
    own: list[Any] = []
    servers: dict[str, list[Any]] = {}
    for spec in specs:
        name = str(getattr(spec, "name", ""))
        if name.startswith(MCP_PREFIX) and "__" in name[len(MCP_PREFIX) :]:
            server = name[len(MCP_PREFIX) :].split("__", 1)[0]
            servers.setdefault(server, []).append(spec)
        else:
            own.append(spec)
    groups = [("tools", "tools (Loom's)", own)] if own else []
    for server, found in sorted(servers.items()):
        groups.append((f"tools:mcp:{server}", f"tools (MCP server {server})", found))
    return groups


def context_view(
    model: str, built: BuiltContext, specs: Sequence[Any], instructions: str, decisions: str
) -> ContextView:
    """The breakdown of `built` (the request as it would be sent)."""
    budget = built.budget
    instructions = instructions.strip()
    system_total = estimate_tokens(built.system)
    in_system = bool(instructions) and instructions in built.system
    rules = estimate_tokens(instructions) if in_system else 0
    parts = [ContextPart("system", "system prompt", max(0, system_total - rules))]
    parts += [
        ContextPart(key, label, estimate_tool_specs_tokens(tuple(found)))
        for key, label, found in tool_groups(specs)
    ]
    decision_tokens = estimate_tokens(decisions) if decisions else 0
    context_tokens = estimate_tokens(built.context) if built.context else 0
    # the rest of the call's context block: headings, environment news, notes
    notes = max(0, context_tokens - budget.repo_map - decision_tokens)
    parts += [
        ContextPart("instructions", "project instructions", rules),
        ContextPart("repo_map", "repo map", budget.repo_map),
        ContextPart("decisions", "decision zone", decision_tokens),
        ContextPart("notes", "other per-call notes", notes),
        ContextPart("messages", "messages", budget.history_used),
        ContextPart("reserved", "reserved for the answer", budget.reserved_output),
    ]
    used = sum(p.tokens for p in parts)
    parts.append(ContextPart("free", "free", max(0, budget.context_window - used)))
    view = ContextView(model, budget.context_window, tuple(parts), None)
    return ContextView(view.model, view.window, view.parts, suggestion_for(view))


def suggestion_for(view: ContextView) -> str | None:
    """One suggestion for the largest part above LARGE_SHARE of the window, if any."""
    candidates = [p for p in view.parts if p.key != "free" and view.share(p) > LARGE_SHARE]
    if not candidates:
        return None
    part = max(candidates, key=lambda p: p.tokens)
    percent = round(100 * view.share(part))
    what = _ADVICE.get(part.key)
    if what is None and part.key.startswith("tools:mcp:"):
        server = part.key.removeprefix("tools:mcp:")
        what = (
            f"set enabled = false in [mcp.servers.{server}] if this project does not need "
            "it, or lower [mcp] tool_tokens"
        )
    if what is None:
        return None
    plural = part.key in ("messages", "instructions", "notes") or part.key.startswith("tools")
    return f"the {part.label} {'are' if plural else 'is'} {percent}% of the window — {what}"


_ADVICE = {
    "system": "set a shorter system prompt, or use a model with a larger window",
    "tools": "keep only the tools this work needs, or use a model with a larger window",
    "instructions": "shorten AGENTS.md / LOOM.md or lower [context] rules_max_tokens",
    "repo_map": "lower [repo] map_tokens",
    "decisions": "lower [context] decision_tokens",
    "notes": "start a new thread for a new task",
    "messages": "start a new thread (/clear) or turn on [context] compaction",
    "reserved": "lower [context] reserved_output_tokens",
}
