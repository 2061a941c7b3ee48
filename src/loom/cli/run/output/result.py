"""What a headless run reports at the end, accumulated from the session's events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from loom.core.events import NewMessage, PermissionRequest, SubagentMessage
from loom.core.messages import AssistantMessage

ResultSubtype = Literal[
    "success", "error_max_turns", "error_max_budget_usd", "error_during_execution"
]
REFUSED_PREFIXES = ("Refused:", "Permission denied:")  # a refused call's tool result


def is_refusal(message: Any) -> bool:
    """A tool result saying the call was refused (by the policy, a rule or a hook)."""
    return getattr(message, "role", "") == "tool" and message.content.startswith(REFUSED_PREFIXES)


def denial(call: Any) -> dict[str, Any]:
    """One entry of Claude Code's `permission_denials`."""
    return {"tool_name": call.tool_name, "tool_use_id": call.id, "tool_input": call.arguments_json}


@dataclass
class RunTally:
    """Counts turns, tokens and cost as events arrive; remembers the last answer."""

    num_turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    total_cost_usd: float | None = 0.0  # None: a model with no known price answered
    last_text: str = ""
    permission_denials: list[dict[str, Any]] = field(default_factory=list)

    def observe(self, event: object) -> None:
        if isinstance(event, SubagentMessage) and isinstance(event.message, AssistantMessage):
            self._add(event.message.usage)  # a sub-agent's tokens and cost count too
        if isinstance(event, NewMessage) and isinstance(event.message, AssistantMessage):
            message = event.message
            self.num_turns += 1
            if message.content:
                self.last_text = message.content
            self._add(message.usage)

    def _add(self, usage: Any) -> None:
        if usage is None:
            return
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_read_input_tokens += usage.cache_read_tokens or 0
        self.cache_creation_input_tokens += usage.cache_write_tokens or 0
        if usage.cost_usd is None or self.total_cost_usd is None:
            self.total_cost_usd = None
        else:
            self.total_cost_usd += usage.cost_usd

    def denied(self, request: PermissionRequest) -> None:
        self.permission_denials.append(
            {
                "tool_name": request.tool_name,
                "tool_use_id": request.call_id,
                "tool_input": request.arguments,
            }
        )

    def usage(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
        }


@dataclass
class RunResult:
    subtype: ResultSubtype
    result: str
    session_id: str
    thread_id: str | None  # None: no thread was kept (nothing was said or answered)
    duration_ms: int
    tally: RunTally
    error: str | None = None

    @property
    def is_error(self) -> bool:
        return self.subtype != "success"

    def to_dict(self) -> dict[str, Any]:
        """Claude Code's result object, plus Loom's `thread_id` (and `error` on failure)."""
        data: dict[str, Any] = {
            "type": "result",
            "subtype": self.subtype,
            "is_error": self.is_error,
            "result": self.result,
            "session_id": self.session_id,
            "num_turns": self.tally.num_turns,
            "duration_ms": self.duration_ms,
            "total_cost_usd": (
                None if self.tally.total_cost_usd is None else round(self.tally.total_cost_usd, 6)
            ),
            "usage": self.tally.usage(),
            "permission_denials": self.tally.permission_denials,
            "thread_id": self.thread_id,
        }
        if self.error is not None:
            data["error"] = self.error
        return data
