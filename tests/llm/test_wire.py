"""Request bodies are built from messages encoded once, never by re-walking the history."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from loom.llm import clients
from loom.llm.base import LlmRequest, collect
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.providers import PROVIDERS, provider_for


def _turn(n: int) -> list[Message]:
    call = ToolCall(id=f"c{n}", tool_name="file_read", arguments_json={"path": f"f{n}.py"})
    return [
        UserMessage(content=f"question {n}"),
        AssistantMessage(content="", tool_calls=[call]),
        ToolMessage(tool_call_id=f"c{n}", tool_name="file_read", content=f"body {n}"),
        AssistantMessage(content=f"answer {n}"),
    ]


@pytest.mark.parametrize("name", PROVIDERS)
async def test_a_long_conversation_encodes_each_message_once(
    name: str, server: FakeLlmServer
) -> None:
    provider = provider_for(name, server)
    history: list[Message] = []
    walked = []
    for n in range(30):
        history += _turn(n)
        server.add(Turn(text="ok"))
        await collect(provider.stream(LlmRequest(model="m", messages=list(history))))
        walked.append(provider.history.walked)  # type: ignore[attr-defined]
    # every message converted exactly once over 30 calls, not 30 times
    assert provider.history.encoded == len(history)  # type: ignore[attr-defined]
    # each call looks only at what is new since the last one, plus the open last group
    # (Anthropic: the last two, whose last blocks carry the moving cache breakpoints)
    assert max(walked[1:]) <= 4 + (3 if name == "anthropic" else 1)
    # and what reached the server is the whole conversation, in order
    sent = json.dumps(server.requests[-1].json)
    assert all(f"question {n}" in sent and f"body {n}" in sent for n in range(30))


@pytest.mark.parametrize("name", PROVIDERS)
async def test_a_new_history_is_encoded_from_the_per_message_cache(
    name: str, server: FakeLlmServer
) -> None:
    provider = provider_for(name, server)
    history = [m for n in range(10) for m in _turn(n)]
    server.add(Turn(text="ok"), Turn(text="ok"))
    await collect(provider.stream(LlmRequest(model="m", messages=history)))
    # a pruned view (the context window leaves the oldest turns out) starts elsewhere:
    # walked again, but no message is converted a second time
    await collect(provider.stream(LlmRequest(model="m", messages=history[8:])))
    assert provider.history.encoded == len(history)  # type: ignore[attr-defined]
    sent = server.requests[-1].json
    assert "question 1" not in json.dumps(sent) and "question 2" in json.dumps(sent)


def _long_turn(n: int) -> list[Message]:
    turn = _turn(n)
    turn[2] = turn[2].model_copy(update={"content": f"body {n} " + "x" * 900})
    return turn


@pytest.mark.parametrize("name", PROVIDERS)
async def test_a_long_history_is_joined_from_a_few_runs(name: str, server: FakeLlmServer) -> None:
    from loom.llm import _wire

    provider = provider_for(name, server)
    history: list[Message] = []
    wire = None
    for n in range(260):  # 1,040 messages: past several runs of `_wire.RUN`
        history += _long_turn(n)
        request = LlmRequest(model="m", system="sys", messages=list(history))
        built = provider.request_body(request)  # (the Responses API's history is per model)
        wire, _ = provider.history.encode(request.messages)
        if n % 37 == 0 or n == 259:
            # the same bytes as a body built from scratch, and what the server read
            fresh = provider_for(name, server).request_body(request)
            assert built == fresh
            server.add(Turn(text="ok"))
            await collect(provider.stream(request))
            assert server.requests[-1].json == json.loads(fresh)
    # the oldest messages come as runs that merge like a binary counter: a request is
    # a few dozen pieces to join at most, not one per message
    assert (
        wire is not None and len(wire) <= _wire.RUN + (len(history) // _wire.RUN).bit_length() + 2
    )
    assert provider.history.encoded == len(history)  # type: ignore[attr-defined]


def _histories() -> st.SearchStrategy[list[Message]]:
    """Histories with everything pairing has to repair: stray and missing results,
    system messages between calls and results, a start with the assistant."""
    ids = st.sampled_from(["a", "b", "c"])
    message = st.one_of(
        st.builds(lambda t: UserMessage(content=t), st.sampled_from(["hi", "", "more"])),
        st.builds(
            lambda t, calls: AssistantMessage(
                content=t,
                tool_calls=[
                    ToolCall(id=i, tool_name="shell", arguments_json={"n": i})
                    for i in dict.fromkeys(calls)
                ],
            ),
            st.sampled_from(["", "ok"]),
            st.lists(ids, max_size=3),
        ),
        st.builds(
            lambda i, err: ToolMessage(
                tool_call_id=i, tool_name="shell", content=f"out {i}", is_error=err
            ),
            ids,
            st.sampled_from([None, True]),
        ),
        st.builds(lambda: SystemMessage(content="note")),
    )
    return st.lists(message, min_size=1, max_size=14)


@settings(max_examples=150, deadline=None)
@given(_histories(), st.lists(st.integers(min_value=1, max_value=14), max_size=5))
def test_incremental_bodies_equal_bodies_built_from_scratch(
    history: list[Message], cuts: list[int]
) -> None:
    from loom.llm.anthropic import AnthropicProvider
    from loom.llm.google import GoogleProvider
    from loom.llm.openai import OpenAIProvider

    for cls in (AnthropicProvider, OpenAIProvider, GoogleProvider):
        growing = cls(api_key="k", base_url="http://127.0.0.1:9")
        for cut in [*sorted(cuts), len(history)]:
            request = LlmRequest(model="m", system="sys", messages=history[:cut])
            fresh = cls(api_key="k", base_url="http://127.0.0.1:9")
            incremental = growing.request_body(request)
            assert incremental == fresh.request_body(request)
            json.loads(incremental)


def test_the_wire_cache_follows_the_message() -> None:
    import gc

    from loom.llm import _wire
    from loom.llm.openai import OpenAIProvider

    message = UserMessage(content="hi")
    twin = UserMessage(content="hi")
    OpenAIProvider(api_key="k", base_url="http://127.0.0.1:9").request_body(
        LlmRequest(model="m", messages=[message])
    )
    assert message == twin and message.model_dump() == twin.model_dump()
    assert id(message) in _wire._encoded
    # a copy with new content is encoded anew, not served the original's bytes
    changed = message.model_copy(update={"content": "bye"})
    body = OpenAIProvider(api_key="k", base_url="http://127.0.0.1:9").request_body(
        LlmRequest(model="m", messages=[changed])
    )
    assert b"bye" in body and b'"hi"' not in body
    key = id(message)
    del message, changed
    gc.collect()
    assert key not in _wire._encoded  # gone with the message


async def test_sessions_share_one_client_per_endpoint_and_key(server: FakeLlmServer) -> None:
    before = clients.client_count()
    providers = [provider_for("openai", server) for _ in range(50)]
    assert clients.client_count() == before + 1
    from loom.llm.registry import create_provider

    create_provider("openai", api_key="another-key", base_url=server.openai_base_url)
    assert clients.client_count() == before + 2
    server.add(Turn(text="a"), Turn(tool_calls=[FakeToolCall("file_read", {"path": "x"})]))
    for provider in providers[:2]:  # the shared client serves each of them
        response = await collect(
            provider.stream(LlmRequest(model="m", messages=[UserMessage(content="hi")]))
        )
        assert response.content or response.tool_calls


def test_a_new_client_loads_what_its_first_connection_needs() -> None:
    # in a fresh process: the imports happen where the client is built (a worker thread
    # for a session's provider), not on the event loop during the first turn
    code = (
        "import sys; from loom.llm.registry import create_provider; from loom.llm import clients;"
        "create_provider('openai', api_key='k', base_url='http://127.0.0.1:9/v1');"
        "print([m for m in clients.TRANSPORT_MODULES if m not in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_body_joins_its_items_into_the_array_of_the_head() -> None:
    import json

    from loom.llm._wire import body

    for items in ([], [b'{"a":1}'], [b"1", b"2"], [b"1", b'"x"', b"3"]):
        for head in ({}, {"model": "m", "stream": True}):
            wire = body(head, "messages", items)
            assert json.loads(wire) == {**head, "messages": [json.loads(i) for i in items]}
