"""The stuck-loop guard: the same tool call, with the same arguments, failing again and
again. Pure functions over the conversation, used by the state machine.

Counted within the current turn, per call signature (tool name + arguments): each failure
of that call adds one, a success of it starts over; other calls in between do not reset
it. The `WARN_AT`th failure in a row tells the model plainly to change approach; the
`STOP_AT`th ends the turn with a message to the person.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from loom.core.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage

WARN_AT = 3
STOP_AT = 5

CHANGE_APPROACH = (
    "[Loom: this exact call ({tool} with the same arguments) has now failed {count} times in "
    "a row. Repeating it will fail again. Change approach: re-read the file or the error, "
    "use another tool or other arguments, or ask the user. At {stop} failures the turn is "
    "stopped.]"
)
STOPPED_RESULT = (
    "Not run: the turn was stopped because {tool} failed {count} times in a row with the same "
    "arguments."
)
STOPPED_MESSAGE = (
    "the agent repeated the same failing call ({tool} with the same arguments) {count} times "
    "in a row, so the turn was stopped; say how to go on (another approach, a fix, more "
    "information)"
)


def signature(call: ToolCall) -> str:
    args = json.dumps(call.arguments_json, sort_keys=True, default=str)
    return f"{call.tool_name}\x00{args}"


def failure_streak(conversation: Sequence[Message], call: ToolCall) -> int:
    """How many times in a row the same call failed so far in this turn (this one not
    counted)."""
    start = 0
    for index in range(len(conversation) - 1, -1, -1):
        if isinstance(conversation[index], UserMessage):
            start = index
            break
    key = signature(call)
    calls: dict[str, str] = {}
    streak = 0
    for message in conversation[start:]:
        if isinstance(message, AssistantMessage):
            calls.update({c.id: signature(c) for c in message.tool_calls})
        elif isinstance(message, ToolMessage) and calls.get(message.tool_call_id) == key:
            streak = streak + 1 if message.is_error else 0
    return streak
