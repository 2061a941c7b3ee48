"""What does a reasoning turn cost? Extra tokens and the time to the first visible token,
side by side with thinking off.

Against the fake LLM server on loopback (tests/fakes/llm_server.py), whose model streams
at --rate tokens a second (about 4 characters a token), for each provider through its
real adapter (`Provider.stream`): a tool round (the model thinks --thinking tokens, says
a line and calls a tool; the next call sends the answer, with its reasoning as the
provider asks, and the result back). Measured, thinking off and on:

- output tokens of the first answer, as the provider's usage reports them (reasoning
  included), and the reasoning tokens where the provider tells them apart;
- what the second call's body carries more for the reasoning sent back (bytes, and
  tokens by Loom's offline count): the signed thinking (Claude), the encrypted item
  (OpenAI); Gemini's thought summaries are shown, not sent back;
- time to the first visible token: the first thinking token (shown as it streams: web,
  ACP, `/thinking`) and the first answer token (what the REPL's folded view and `loom run`
  text show first), from the request's start. Median of --turns.

    .venv/bin/python bench/reasoning_cost.py [--thinking 600] [--rate 150] [--turns 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn  # noqa: E402

from loom.core.messages import AssistantMessage, Message, ToolMessage, UserMessage  # noqa: E402
from loom.llm.base import (  # noqa: E402
    LlmRequest,
    ReasoningReady,
    TextDelta,
    ThinkingDelta,
    ToolCallReady,
    ToolSpec,
    UsageReport,
)
from loom.llm.registry import create_provider  # noqa: E402
from loom.llm.tokens import estimate_tokens  # noqa: E402

# (model, effort) with thinking on, and the same provider with it off: Claude without an
# effort does not think; OpenAI's and Gemini's thinking models always think, so their
# "off" is the family's model that does not (gpt-4.1, gemini-2.0-flash)
CASES = {
    "anthropic": (("claude-sonnet-4-5", None), ("claude-sonnet-4-5", "medium")),
    "openai": (("gpt-4.1", None), ("gpt-5", "medium")),
    "google": (("gemini-2.0-flash", None), ("gemini-2.5-flash", "medium")),
}
READ = ToolSpec("file_read", "Read a file.", {"type": "object", "properties": {}})
WORDS_PER_CHUNK = 6  # about 8 tokens a chunk


def _chunks(tokens: int, word: str) -> list[str]:
    """About `tokens` tokens (4 characters each) of text, WORDS_PER_CHUNK words a chunk."""
    text, size = [], 0
    while size < tokens * 4:
        text.append(f"{word}{len(text)} ")
        size += len(text[-1])
    return ["".join(text[i : i + WORDS_PER_CHUNK]) for i in range(0, len(text), WORDS_PER_CHUNK)]


async def _turn(provider, model: str, messages: list[Message], effort: str | None):  # type: ignore[no-untyped-def]
    request = LlmRequest(
        model=model,
        messages=messages,
        system="You are Loom.",
        tools=(READ,),
        max_tokens=8192,
        effort=effort,
    )
    start = time.perf_counter()
    first_thought = first_text = None
    calls, reasoning, usage, text = [], [], None, []
    async for event in provider.stream(request):
        now = time.perf_counter() - start
        if isinstance(event, ThinkingDelta) and first_thought is None:
            first_thought = now
        elif isinstance(event, TextDelta):
            first_text = now if first_text is None else first_text
            text.append(event.text)
        elif isinstance(event, ToolCallReady):
            calls.append(event.call)
        elif isinstance(event, ReasoningReady):
            reasoning.append(event.part)
        elif isinstance(event, UsageReport):
            usage = event.usage
    reply = AssistantMessage(content="".join(text), tool_calls=calls, reasoning=reasoning or None)
    return reply, usage, first_thought, first_text


async def measure(
    name: str, model: str, effort: str | None, args: argparse.Namespace
) -> dict[str, float]:
    thinking = _chunks(args.thinking, "idea")
    pause = args.thinking / len(thinking) / args.rate  # seconds between chunks at --rate
    rows: list[dict[str, float]] = []
    with FakeLlmServer() as server:
        url = server.openai_base_url if name == "openai" else server.base_url
        # an adapter: each one builds its body (request_body), which Provider does not name
        provider: Any = create_provider(name, api_key="bench-key", base_url=url)
        for _ in range(args.turns):
            server.add(
                Turn(
                    thinking=thinking,
                    text=_chunks(40, "answer"),
                    tool_calls=[FakeToolCall("file_read", {"path": "a.py"})],
                    chunk_delay=pause,
                ),
                Turn(text="done"),
            )
            history: list[Message] = [UserMessage(content="What does a.py do?")]
            reply, usage, thought_at, text_at = await _turn(provider, model, history, effort)
            result = ToolMessage(
                tool_call_id=reply.tool_calls[0].id, tool_name="file_read", content="print('hi')"
            )
            await _turn(provider, model, [*history, reply, result], effort)
            second = server.requests[-1]
            bare = reply.model_copy(update={"reasoning": None})
            without = provider.request_body(  # the same second call with nothing sent back
                LlmRequest(
                    model=model,
                    messages=[*history, bare, result],
                    system="You are Loom.",
                    tools=(READ,),
                    max_tokens=8192,
                    effort=effort,
                )
            )
            raw = json.dumps(second.json, separators=(",", ":")).encode()
            plain = json.dumps(json.loads(without), separators=(",", ":")).encode()
            rows.append(
                {
                    "out": usage.output_tokens if usage else 0,
                    "reasoning": (usage.reasoning_tokens or 0) if usage else 0,
                    "resent_bytes": len(raw) - len(plain),
                    "resent_tokens": estimate_tokens(raw.decode())
                    - estimate_tokens(plain.decode()),
                    "first_thought_ms": (thought_at or 0) * 1000,
                    "first_text_ms": (text_at or 0) * 1000,
                }
            )
    return {key: statistics.median(row[key] for row in rows) for key in rows[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--thinking", type=int, default=600, help="tokens the model thinks")
    parser.add_argument("--rate", type=float, default=150.0, help="model tokens a second")
    parser.add_argument("--turns", type=int, default=5)
    args = parser.parse_args()
    print(f"thinking {args.thinking} tokens at {args.rate:g} tokens/s; medians of {args.turns}")
    header = (
        "provider",
        "effort",
        "out tok",
        "reasoning",
        "resent B",
        "resent tok",
        "1st thought ms",
        "1st answer ms",
    )
    print("{:<28} {:<7} {:>8} {:>9} {:>9} {:>10} {:>14} {:>13}".format(*header))
    for name, cases in CASES.items():
        for model, effort in cases:
            row = asyncio.run(measure(name, model, effort, args))
            thought = f"{row['first_thought_ms']:.0f}" if row["first_thought_ms"] else "-"
            shown = f"{name} {model}"
            print(
                f"{shown:<28} {effort or 'off':<7} {row['out']:>8.0f} {row['reasoning']:>9.0f} "
                f"{row['resent_bytes']:>9.0f} {row['resent_tokens']:>10.0f} {thought:>14} "
                f"{row['first_text_ms']:>13.0f}"
            )


if __name__ == "__main__":
    main()
