"""What do the provider adapters cost on top of the wire?

Against the fake LLM server on loopback (tests/fakes/llm_server.py), for each provider:

1. streamed turn: one response of 200 text chunks plus a tool call whose arguments
   arrive in fragments, consumed through `Provider.stream` (SDK parsing + our event
   assembly). Baseline in the same run: the same request and bytes read raw with
   httpx2 (`aiter_lines`), no parsing. Median over --turns turns.
2. first request from a fresh process: spawn Python, `provider_for_model(...)` and
   stream one turn; time from spawn to the server recording the request (this is the
   SDK import + client construction cost that `loom run` pays). Baseline: a fresh
   Python process that sends the same request with bare httpx2.

    .venv/bin/python bench/llm_providers.py [--turns 30] [--spawns 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn  # noqa: E402

from loom.core.messages import UserMessage  # noqa: E402
from loom.llm.base import LlmRequest, ToolSpec, collect  # noqa: E402
from loom.llm.registry import create_provider  # noqa: E402

PROVIDERS = ["anthropic", "openai", "google"]
PATHS = {
    "anthropic": "/v1/messages",
    "openai": "/v1/chat/completions",
    "google": "/v1beta/models/m:streamGenerateContent?alt=sse",
}
TURN = Turn(
    text=[f"word{i} " for i in range(200)],
    tool_calls=[FakeToolCall("file_read", {"path": "src/" + "x" * 300})],
)
SPEC = ToolSpec(
    "file_read", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}
)


def _url(server: FakeLlmServer, name: str) -> str:
    return server.openai_base_url if name == "openai" else server.base_url


async def _adapter_turns(server: FakeLlmServer, name: str, turns: int) -> list[float]:
    provider = create_provider(name, api_key="bench", base_url=_url(server, name))
    request = LlmRequest(model="m", messages=[UserMessage(content="go")], tools=[SPEC])
    times = []
    for _ in range(turns + 3):
        start = time.perf_counter()
        response = await collect(provider.stream(request))
        times.append(time.perf_counter() - start)
        assert len(response.tool_calls) == 1
    return times[3:]


async def _raw_turns(server: FakeLlmServer, name: str, turns: int) -> list[float]:
    import httpx2

    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]}
    times = []
    async with httpx2.AsyncClient() as client:
        for _ in range(turns + 3):
            start = time.perf_counter()
            async with client.stream("POST", server.base_url + PATHS[name], json=body) as reply:
                async for _line in reply.aiter_lines():
                    pass
            times.append(time.perf_counter() - start)
    return times[3:]


_CHILD = """
import asyncio, sys
sys.path.insert(0, {src!r})
from loom.core.messages import UserMessage
from loom.llm.base import LlmRequest, collect
from loom.llm.registry import provider_for_model
provider, model = provider_for_model({model!r}, api_key="bench", base_url={url!r})
asyncio.run(collect(provider.stream(LlmRequest(model=model, messages=[UserMessage(content="go")]))))
"""
_RAW_CHILD = """
import httpx2
httpx2.post({url!r}, json={{"model": "m", "stream": True, "messages": []}}).read()
"""


def _spawn_to_request(server: FakeLlmServer, code: str, spawns: int) -> list[float]:
    times = []
    for _ in range(spawns):
        before = len(server.requests)
        start = time.time()
        subprocess.run(
            [sys.executable, "-c", code],
            check=True,
            cwd=ROOT,
            env={**os.environ, "LOOM_ALLOW_MODEL_REQUESTS": "0"},
        )
        times.append(server.requests[before].at - start)
    return times


def _ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--spawns", type=int, default=5)
    args = parser.parse_args()
    with FakeLlmServer(default=TURN) as server:
        print(f"streamed turn (200 text chunks + 1 tool call), median of {args.turns}:")
        for name in PROVIDERS:
            adapter = asyncio.run(_adapter_turns(server, name, args.turns))
            raw = asyncio.run(_raw_turns(server, name, args.turns))
            print(
                f"  {name:10} adapter {_ms(adapter):7.1f} ms   raw httpx2 {_ms(raw):6.1f} ms"
                f"   ratio {_ms(adapter) / _ms(raw):5.2f}x"
            )
        print(f"fresh process to first request at the server, median of {args.spawns}:")
        raw = _spawn_to_request(
            server, _RAW_CHILD.format(url=server.base_url + PATHS["anthropic"]), args.spawns
        )
        print(f"  {'baseline':10} bare httpx2 {_ms(raw):7.1f} ms")
        for name, model in [
            ("anthropic", "anthropic:claude-sonnet-4-6"),
            ("openai", "openai:gpt-4.1"),
            ("google", "google:gemini-2.5-pro"),
        ]:
            code = _CHILD.format(src=str(ROOT / "src"), model=model, url=_url(server, name))
            took = _spawn_to_request(server, code, args.spawns)
            print(f"  {name:10} via SDK {_ms(took):7.1f} ms   ratio {_ms(took) / _ms(raw):5.2f}x")


if __name__ == "__main__":
    main()
