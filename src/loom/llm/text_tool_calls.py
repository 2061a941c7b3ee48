"""Tool calls written as text, for models served without native tool calling.

Some local models (Hermes-style, Qwen) behind an OpenAI-compatible server answer with

    <tool_call>
    {"name": "file_read", "arguments": {"path": "a.py"}}
    </tool_call>

in the text instead of a `tool_calls` field. With `[providers.openai-compatible]
text_tool_calls = true` (opt-in: a model that merely talks about the format must not
run tools), the session turns such blocks into tool calls and takes them out of the
answer's text. A block that is not usable JSON becomes a call whose arguments say so, so
the model is told how to fix it, like any malformed call.
"""

from __future__ import annotations

import json
import re

from loom.core.ids import new_call_id
from loom.core.jsonish import is_json_object
from loom.core.messages import ToolCall
from loom.llm.base import RAW_ARGUMENTS_KEY, parse_tool_arguments

_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
FORMAT_NOTE = (
    "# Calling tools\n\n"
    "To call a tool, write a block like this in your answer, one block per call, and "
    "nothing after your last block:\n"
    '<tool_call>\n{"name": "file_read", "arguments": {"path": "src/app.py"}}\n</tool_call>\n'
    "The results come back in the next message."
)


def extract_text_tool_calls(text: str) -> tuple[str, list[ToolCall]]:
    """(the text without its <tool_call> blocks, the calls they held)."""
    if "<tool_call>" not in text:
        return text, []
    calls = [_call(block) for block in _BLOCK.findall(text)]
    rest = _BLOCK.sub("", text).strip()
    return rest, calls


def _call(block: str) -> ToolCall:
    body = block.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    data = parse_tool_arguments(body)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        # no usable name: an unknown-tool error tells the model what it sent
        return ToolCall(id=new_call_id(), tool_name="(unnamed)",
                        arguments_json={RAW_ARGUMENTS_KEY: block})  # fmt: skip
    args: object = data.get("arguments", data.get("parameters", {}))
    if isinstance(args, str):
        args = parse_tool_arguments(args)
    if not is_json_object(args):
        args = {RAW_ARGUMENTS_KEY: json.dumps(args)}
    return ToolCall(id=new_call_id(), tool_name=name, arguments_json=args)
