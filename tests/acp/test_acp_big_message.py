"""`loom acp` with a thread holding a 50 MB message: loading and prompting it reaches the
model, and SIGTERM while it is being processed ends the agent (issue 26). No timing is
asserted beyond generous limits for "it ended"."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from acp import PROTOCOL_VERSION, text_block
from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.acp import RecordingClient, acp_agent
from tests.support.threads import save_big_message_thread

pytestmark = pytest.mark.asyncio
MODEL = ("--model", "openai:gpt-4o")


async def test_a_50_mb_thread_loads_and_its_next_prompt_reaches_the_model(
    server: FakeLlmServer, project: Path
) -> None:
    thread_id = save_big_message_thread(project)
    server.add(Turn(text="A summary of the hex dump."), Turn(text="resumed fine"))
    client = RecordingClient()
    async with acp_agent(server, project, client, *MODEL) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await asyncio.wait_for(
            conn.load_session(cwd=str(project), session_id=thread_id, mcp_servers=[]), 240
        )
        reply = await asyncio.wait_for(
            conn.prompt(session_id=thread_id, prompt=[text_block("and now?")]), 240
        )
        assert reply.stop_reason == "end_turn"
        assert "resumed fine" in client.text(thread_id)
    assert server.requests[-1].json["input"][-1]["content"] == "and now?"  # Responses API


@pytest.mark.parametrize("when", ["loading", "prompting"])
async def test_sigterm_while_a_50_mb_thread_is_processed_ends_the_agent(
    server: FakeLlmServer, project: Path, when: str
) -> None:
    thread_id = save_big_message_thread(project)
    server.add(Turn(text="never seen", delay=120))
    client = RecordingClient()
    async with acp_agent(server, project, client, *MODEL) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        load = conn.load_session(cwd=str(project), session_id=thread_id, mcp_servers=[])
        if when == "loading":
            busy = asyncio.ensure_future(load)
            await asyncio.sleep(0.5)  # the 50 MB file is being read and replayed
        else:
            await asyncio.wait_for(load, 240)
            busy = asyncio.ensure_future(
                conn.prompt(session_id=thread_id, prompt=[text_block("and now?")])
            )
            for _ in range(2400):  # the 50 MB went to the model, which takes its time
                if server.requests:
                    break
                await asyncio.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(process.wait(), 60)
        busy.cancel()
        assert code != 0
