"""What the fake LLM server received, read the same way whatever the provider's format."""

from __future__ import annotations

import json
from typing import Any


def system_of(request: Any) -> str:
    """The system prompt of a recorded request (Anthropic, OpenAI or Gemini body)."""
    body = request.json
    if request.format == "anthropic":
        system = body.get("system", "")
        return system if isinstance(system, str) else "".join(b["text"] for b in system)
    if request.format == "openai":
        return "".join(
            m["content"] for m in body["messages"] if m["role"] in ("system", "developer")
        )
    if request.format == "responses":
        return body.get("instructions", "")
    return "".join(p["text"] for p in body["systemInstruction"]["parts"])


def tool_results(request: Any) -> list[str]:
    """Every tool result a recorded request carries, as text, in order."""
    found = []
    for message in request.json.get("messages", []) or request.json.get("input", []):
        if message.get("type") == "function_call_output":
            output = message.get("output")
            found.append(output if isinstance(output, str) else json.dumps(output))
            continue
        content = message.get("content")
        if message.get("role") == "tool":
            found.append(content if isinstance(content, str) else json.dumps(content))
        elif isinstance(content, list):
            found += [str(b.get("content")) for b in content if b.get("type") == "tool_result"]
    return found
