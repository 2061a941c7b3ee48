"""What the chat shows, built from thread messages: user and assistant turns, and one
card per tool call (arguments, status, duration, output, and a diff for file edits).

The same builders serve a page load (the whole history) and the live stream (one event),
so a reload shows exactly what the stream showed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from loom.session import EditPreview, present_call, read_text
from loom.web.render import diff_html, markdown, unified_diff

MAX_OUTPUT_CHARS = 20_000
MAX_MESSAGE_CHARS = 100_000  # of a message's text on the page
DISK_DIFF_BYTES = 256_000  # a bigger file's change is shown from the tool's arguments


@dataclass
class ToolCard:
    call_id: str
    name: str
    subject: str
    arguments: str  # pretty JSON
    diff: Markup | None = None
    status: str = "pending"  # pending | running | done | error | denied | interrupted
    output: str = ""
    duration: float | None = None  # seconds, when this process saw it run
    link: str = ""  # a task call's sub-agent: its thread's page

    @property
    def status_label(self) -> str:
        return {
            "pending": "Waiting",
            "running": "Running",
            "done": "Done",
            "error": "Failed",
            "denied": "Denied",
            "interrupted": "Interrupted",
        }.get(self.status, self.status)


@dataclass
class ChatItem:
    kind: str  # user | assistant | notice | plan
    text: str = ""
    html: Markup | None = None
    tools: list[ToolCard] = field(default_factory=list)
    model: str | None = None
    level: str = "info"  # for notices: info | warn | error
    plan: dict[str, Any] | None = None  # kind "plan": the architect's plan
    images: list[str] = field(default_factory=list)  # kind "user": attached images, described
    thinking: str = ""  # kind "assistant": its readable reasoning, shown folded
    # kind "user": what came with the words: (label, text) of a file, a listing, a hook's context
    attached: list[tuple[str, str]] = field(default_factory=list)


def reasoning_text(message: Any) -> str:
    """An answer's readable reasoning (opaque parts are never shown)."""
    parts = getattr(message, "reasoning", None) or ()
    return "\n\n".join(part.text for part in parts if part.text)


def card_for(
    call: Any,
    durations: dict[str, float] | None = None,
    diffs: dict[str, Markup | None] | None = None,
    tools: Any = None,
) -> ToolCard:
    """A call's card, as its tool presents it (`tools`: the session's ToolRegistry, None
    for a thread no session runs). `diffs` holds the diffs this process took from disk
    before an edit ran (with context lines); otherwise the diff comes from the arguments."""
    args = dict(call.arguments_json or {})
    shown = present_call(tools, call.tool_name, args)
    diff = (diffs or {}).get(call.id) or args_diff(shown.preview)
    return ToolCard(
        call_id=call.id,
        name=call.tool_name,
        subject=shown.subject,
        arguments=json.dumps(args, indent=2, ensure_ascii=False)[:MAX_OUTPUT_CHARS],
        diff=diff,
        duration=(durations or {}).get(call.id),
    )


def args_diff(preview: EditPreview | None) -> Markup | None:
    """The change an editing call asks for, from its arguments alone (history view)."""
    if preview is None:
        return None
    text = unified_diff(preview.path, preview.old_text or "", preview.new_text)
    if preview.whole_file:
        return diff_html(text)
    return diff_html(text) if text else None


def saved_diffs(
    messages: list[Any], befores: dict[str, str], tools: Any = None
) -> dict[str, Markup | None]:
    """The diffs of a thread's edits with their context lines, as the live cards showed
    them: each applied to the file as its checkpoint kept it before the call
    (`befores`, from `texts_before_edits`)."""
    found: dict[str, Markup | None] = {}
    for message in messages:
        for call in getattr(message, "tool_calls", None) or ():
            before = befores.get(call.id)
            if before is None:
                continue
            shown = present_call(tools, call.tool_name, dict(call.arguments_json or {}))
            preview = shown.preview
            after = preview.applied_to(before) if preview is not None else None
            if after is not None and shown.path:
                text = unified_diff(shown.path, before, after)
                found[call.id] = diff_html(text) if text else None
    return found


def disk_diff(
    project_root: Path, tool_name: str, args: dict[str, Any], tools: Any = None
) -> Markup | None:
    """The change an editing call is about to make, against the file on disk (the
    modal). Built on the event loop, so the file is read the bounded way (a FIFO, a 1 GiB
    or unreadable file: the change from the arguments alone)."""
    shown = present_call(tools, tool_name, args)
    if not shown.edits_files or shown.path is None:
        return None
    before = read_text(project_root, shown.path, DISK_DIFF_BYTES)
    preview = shown.preview
    after = preview.applied_to(before) if preview is not None and before is not None else None
    if before is None or after is None:
        return args_diff(preview)
    text = unified_diff(shown.path, before, after)
    return diff_html(text) if text else None


def outcome_status(is_error: bool | None, content: str) -> str:
    if not is_error:
        return "done"
    if content.startswith("Permission denied"):
        return "denied"
    if content.startswith("Interrupted"):
        return "interrupted"
    return "error"


def folded(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """A message as the page shows it: at most `limit` characters, then how many more
    (a 50 MB paste would make a 50 MB page, rendered on the event loop)."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n\n… {len(text) - limit:,} more characters (`loom export` has all)"


def chat_items(
    messages: list[Any],
    durations: dict[str, float] | None = None,
    diffs: dict[str, Markup | None] | None = None,
    tools: Any = None,
    notices: list[tuple[int, ChatItem]] | None = None,
) -> list[ChatItem]:
    """The thread's messages as chat items; tool results fill their call's card.
    `notices`: (how many messages the thread held when it came, the notice), each put
    where it was shown live."""
    items: list[ChatItem] = []
    cards: dict[str, ToolCard] = {}
    waiting = sorted(notices or (), key=lambda pair: pair[0])
    for index, message in enumerate(messages):
        while waiting and waiting[0][0] <= index:
            items.append(waiting.pop(0)[1])
        role = getattr(message, "role", "")
        extra = getattr(message, "model_extra", None) or {}
        if role == "user" and extra.get("architect_step"):
            # architect mode's step request: the plan panel shows the step itself
            items.append(ChatItem("notice", text=message.content.split("\n\n")[0]))
        elif role == "user":
            attached = [ref.describe() for ref in getattr(message, "images", None) or ()]
            extras = [
                (a.label, folded(a.text)) for a in getattr(message, "attachments", None) or ()
            ]
            items.append(
                ChatItem("user", text=folded(message.content), images=attached, attached=extras)
            )
        elif role == "assistant" and isinstance(extra.get("plan"), dict):
            items.append(ChatItem("plan", plan=_plan_view(extra["plan"])))
        elif role == "assistant":
            shown = [card_for(call, durations, diffs, tools) for call in message.tool_calls]
            cards.update((card.call_id, card) for card in shown)
            items.append(
                ChatItem(
                    "assistant",
                    html=markdown(folded(message.content)) if message.content else None,
                    tools=shown,
                    model=message.model,
                    thinking=reasoning_text(message),
                )
            )
        elif role == "tool":
            card = cards.get(message.tool_call_id)
            if card is not None:
                fill_result(card, message.content, message.is_error)
    items.extend(notice for _at, notice in waiting)
    return items


def _plan_view(plan: dict[str, Any]) -> dict[str, Any]:
    steps = [
        dict(step, status="planned") for step in plan.get("steps", []) if isinstance(step, dict)
    ]
    return {"summary": str(plan.get("summary", "")), "steps": steps}


def fill_result(card: ToolCard, content: str, is_error: bool | None) -> None:
    card.output = content[:MAX_OUTPUT_CHARS] + (
        f"\n… {len(content) - MAX_OUTPUT_CHARS} more characters"
        if len(content) > MAX_OUTPUT_CHARS
        else ""
    )
    card.status = outcome_status(is_error, content)
    if card.name == "task":
        from loom.core.family import child_named

        child = child_named(content)
        if child is not None:
            card.link = f"/s/{child[1]}"


def usage_totals(messages: list[Any]) -> dict[str, Any]:
    """Tokens and cost of a whole thread, and of its last turn (since the last user
    message), from the usage each assistant message carries, and the share of the input
    the provider's prompt cache served ("cache 93%", "" for none). A cost is None (shown
    as unknown, never $0) once a call of a model with no known price counts in it."""
    from loom.core.usage import UsageTotals

    total, turn = UsageTotals(), UsageTotals()
    for message in messages:
        if getattr(message, "role", "") == "user":
            turn = UsageTotals()
        usage = getattr(message, "usage", None)
        total.add(usage)
        turn.add(usage)
    return {
        "tokens": total.prompt_tokens + total.output_tokens,
        "cost": total.cost_usd,
        "cache": total.cache_text(),
        "turn_tokens": turn.prompt_tokens + turn.output_tokens,
        "turn_cost": turn.cost_usd,
    }


def add_cost(total: float | None, cost: float | None) -> float | None:
    """A running cost: unknown (None) once one part of it is."""
    return None if total is None or cost is None else total + cost
