"""The providers' prompt caches, as each documents them, for the fake LLM server.

A request's prompt is a sequence of *blocks* in the order the provider reads it (tools,
system, then each message's content blocks); a block costs len(its JSON) / 4 tokens,
the fake's token count everywhere. What a provider serves from its cache is a prefix
of that sequence that an earlier request (still alive) shared:

- **Anthropic** (docs: build-with-claude/prompt-caching): only at `cache_control`
  breakpoints, at most 4 per request (a 5th is a 400), each `{"type": "ephemeral"}`
  with an optional `ttl` of "5m" or "1h" (a 1h one may not follow a 5m one). A request
  reads the longest prefix ending at a breakpoint or at most 20 blocks before one that
  an earlier request wrote, and writes the prefix up to each breakpoint; prefixes
  shorter than the model's minimum (1,024 tokens; 2,048 for Haiku 3/3.5; 4,096 for
  Opus 4.5 and Haiku 4.5) are not cached. An entry lives for its TTL after its last use.
  `cache_control` itself is not part of the prefix. Usage: `input_tokens` (uncached),
  `cache_read_input_tokens`, `cache_creation_input_tokens` (and `cache_creation` by TTL).
- **OpenAI** (docs: guides/prompt-caching), Chat Completions and Responses: automatic
  for prompts of 1,024 tokens or more; a hit covers the longest shared prefix in steps:
  the first 1,024 tokens, then 128 more at a time; requests are routed by
  `prompt_cache_key` (else the start of the prompt), and an entry lives 10 minutes after
  its last use. Usage: `prompt_tokens` (all), `prompt_tokens_details.cached_tokens`
  (Responses: `input_tokens`, `input_tokens_details.cached_tokens`).
- **Gemini** (docs: caching, implicit caching): automatic for a shared prefix of at
  least 1,024 tokens (2.5 Flash; 4,096 for Pro models). Usage: `promptTokenCount` (all),
  `cachedContentTokenCount`.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
OPENAI_MIN, OPENAI_STEP, OPENAI_LIFE = 1024, 128, 600.0
GEMINI_LIFE = 600.0


class CacheRuleError(ValueError):
    """A request the provider refuses for its caching fields (HTTP 400)."""


@dataclass(frozen=True)
class PromptUsage:
    total: int  # every input token of the request
    read: int = 0  # served from the cache
    write: int = 0  # written to it (Anthropic)
    write_1h: int = 0  # of `write`, kept for an hour

    @property
    def uncached(self) -> int:
        return self.total - self.read - self.write


def tokens(data: bytes) -> int:
    return (len(data) + 3) // 4


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def anthropic_minimum(model: str) -> int:
    if "haiku-4-5" in model or "opus-4-5" in model or "opus-4-6" in model:
        return 4096
    if "haiku" in model and ("3-5" in model or "3-haiku" in model):
        return 2048
    return 1024


def gemini_minimum(model: str) -> int:
    return 4096 if "pro" in model else 1024


@dataclass
class _Block:
    data: bytes
    control: dict[str, Any] | None = None


def _anthropic_blocks(body: dict[str, Any]) -> list[_Block]:
    blocks: list[_Block] = []

    def add(prefix: str, item: Any) -> None:
        if isinstance(item, dict):
            item = dict(item)
            control = item.pop("cache_control", None)
        else:
            control = None
        blocks.append(_Block(prefix.encode() + _canonical(item), control))

    for tool in body.get("tools") or []:
        add("tool:", tool)
    system = body.get("system")
    if isinstance(system, str) and system:
        add("system:", {"type": "text", "text": system})
    elif isinstance(system, list):
        for block in system:
            add("system:", block)
    for message in body.get("messages") or []:
        role = str(message.get("role"))
        content = message.get("content")
        if isinstance(content, str):
            add(f"{role}:", {"type": "text", "text": content})
        else:
            for block in content or []:
                add(f"{role}:", block)
    return blocks


def _check_controls(blocks: list[_Block]) -> list[tuple[int, str]]:
    """(block index, ttl) of each breakpoint; raises what the API answers with a 400."""
    found: list[tuple[int, str]] = []
    for index, block in enumerate(blocks):
        control = block.control
        if control is None:
            continue
        if not isinstance(control, dict) or control.get("type") != "ephemeral":
            raise CacheRuleError(f"cache_control: unknown type {control!r}")
        ttl = control.get("ttl", "5m")
        if ttl not in TTL_SECONDS:
            raise CacheRuleError(f"cache_control.ttl: Input should be '5m' or '1h', not {ttl!r}")
        if ttl == "1h" and any(t == "5m" for _, t in found):
            raise CacheRuleError(
                "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block"
            )
        found.append((index, ttl))
    if len(found) > MAX_BREAKPOINTS:
        raise CacheRuleError(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(found)}."
        )
    return found


@dataclass
class PromptCaches:
    """One server's caches, per provider. `account` returns what a request gets from its
    provider's cache and a function that stores what it writes (called once the request
    is answered: a scripted error writes nothing)."""

    clock: Callable[[], float] = time.monotonic
    # prefix hash -> (expiry, ttl in seconds)
    _anthropic: dict[bytes, tuple[float, float]] = field(default_factory=dict)
    _prompts: dict[tuple[str, str], list[tuple[bytes, float]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def account(
        self, fmt: str, body: Any, model: str = ""
    ) -> tuple[PromptUsage, Callable[[], None]]:
        if not isinstance(body, dict):
            return PromptUsage(0), lambda: None
        if fmt == "anthropic":
            return self._anthropic_usage(body)
        if fmt in ("openai", "responses"):  # Chat Completions and the Responses API alike
            return self._prefix_usage(fmt, body, str(body.get("prompt_cache_key") or ""))
        if fmt == "google":
            return self._prefix_usage("google", body, "", model)
        return PromptUsage(0), lambda: None

    # -- Anthropic: breakpoints --------------------------------------------------------

    def _anthropic_usage(self, body: dict[str, Any]) -> tuple[PromptUsage, Callable[[], None]]:
        blocks = _anthropic_blocks(body)
        breakpoints = _check_controls(blocks)
        hashes: list[bytes] = []
        ends: list[int] = []
        running, total = hashlib.sha256(), 0
        for block in blocks:
            running.update(block.data)
            hashes.append(running.copy().digest())
            total += tokens(block.data)
            ends.append(total)
        minimum = anthropic_minimum(str(body.get("model", "")))
        now = self.clock()
        with self._lock:
            read_at = -1
            for index, _ttl in breakpoints:
                for position in range(index, max(-1, index - LOOKBACK_BLOCKS - 1), -1):
                    entry = self._anthropic.get(hashes[position])
                    if entry is not None and entry[0] > now:
                        read_at = max(read_at, position)
                        break
        read = ends[read_at] if read_at >= 0 else 0
        write = write_1h = 0
        cacheable = [(i, ttl) for i, ttl in breakpoints if ends[i] >= minimum]
        if cacheable and cacheable[-1][0] > read_at:
            write = ends[cacheable[-1][0]] - read
            # the part of the write up to the last 1h breakpoint is kept an hour
            hour = [i for i, ttl in cacheable if ttl == "1h" and i > read_at]
            write_1h = ends[hour[-1]] - read if hour else 0

        def commit() -> None:
            at = self.clock()
            with self._lock:
                if read_at >= 0:
                    _, ttl_s = self._anthropic[hashes[read_at]]
                    self._anthropic[hashes[read_at]] = (at + ttl_s, ttl_s)
                for index, ttl in cacheable:
                    self._anthropic[hashes[index]] = (at + TTL_SECONDS[ttl], TTL_SECONDS[ttl])

        return PromptUsage(total, read, write, write_1h), commit

    # -- OpenAI and Gemini: automatic prefixes -----------------------------------------

    def _prefix_usage(
        self, fmt: str, body: dict[str, Any], key: str, model: str = ""
    ) -> tuple[PromptUsage, Callable[[], None]]:
        prompt = _prompt_bytes(fmt, body)
        total = tokens(prompt)
        route = key or hashlib.sha256(prompt[: OPENAI_MIN * 4]).hexdigest()
        life = GEMINI_LIFE if fmt == "google" else OPENAI_LIFE
        now = self.clock()
        with self._lock:
            alive = [(p, t) for p, t in self._prompts.get((fmt, route), []) if t > now]
            self._prompts[(fmt, route)] = alive
            shared = max((_common_prefix(prompt, p) for p, _ in alive), default=0)
        shared_tokens = shared // 4
        if fmt != "google":
            minimum = OPENAI_MIN
            read = (
                0
                if total < minimum or shared_tokens < minimum
                else minimum + (shared_tokens - minimum) // OPENAI_STEP * OPENAI_STEP
            )
        else:
            minimum = gemini_minimum(model)
            read = shared_tokens if shared_tokens >= minimum else 0
        read = min(read, total)

        def commit() -> None:
            if total < minimum:
                return
            with self._lock:
                kept = self._prompts.setdefault((fmt, route), [])
                kept.append((prompt, self.clock() + life))
                del kept[:-8]  # the newest few are what a next request extends

        return PromptUsage(total, read), commit


def _prompt_bytes(fmt: str, body: dict[str, Any]) -> bytes:
    """The prompt as the provider reads it: tools, then system, then the messages."""
    if fmt == "openai":
        parts = [_canonical(tool) for tool in body.get("tools") or []]
        parts += [_canonical(message) for message in body.get("messages") or []]
    elif fmt == "responses":
        parts = [_canonical(body.get("instructions") or "")]
        parts += [_canonical(tool) for tool in body.get("tools") or []]
        parts += [_canonical(item) for item in body.get("input") or []]
    else:
        parts = [_canonical(body.get("systemInstruction") or {})]
        parts += [_canonical(tool) for tool in body.get("tools") or []]
        parts += [_canonical(content) for content in body.get("contents") or []]
    return b"".join(parts)


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of `a` and `b` (by halving: C-speed compares)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
