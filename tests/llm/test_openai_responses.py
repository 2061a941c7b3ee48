"""The OpenAI Responses API adapter through the real SDK against the fake server, which
enforces what the API enforces about reasoning items sent back."""

from __future__ import annotations

import pytest

from loom.core.images import ImageRef
from loom.core.messages import Message, UserMessage
from loom.llm.base import LlmError, ThinkingDelta, collect
from loom.llm.openai_responses import OpenAIResponsesProvider
from tests.fakes.llm_reasoning import CODEX_404
from tests.fakes.llm_server import FakeLlmServer, FakeToolCall, Turn
from tests.support.providers import provider_for
from tests.support.reasoning import answered, replay, tool_request


async def test_openai_speaks_the_responses_api_by_default(server: FakeLlmServer) -> None:
    assert isinstance(provider_for("openai", server), OpenAIResponsesProvider)
    assert not isinstance(provider_for("openai-compatible", server), OpenAIResponsesProvider)
    assert not isinstance(provider_for("openai", server, api="chat"), OpenAIResponsesProvider)
    compatible = provider_for("openai-compatible", server, api="responses")
    assert (
        isinstance(compatible, OpenAIResponsesProvider) and compatible.name == "openai-compatible"
    )


async def test_reasoning_items_are_kept_and_sent_back_in_order(server: FakeLlmServer) -> None:
    server.add(
        Turn(
            thinking="The user wants two files; read both at once.",
            text="Reading both.",
            tool_calls=[FakeToolCall("file_read", {"path": "a.py"}),
                        FakeToolCall("file_read", {"path": "b.py"})],
        ),
        Turn(text="Both read."),
    )  # fmt: skip
    provider = provider_for("openai", server)
    history: list[Message] = [UserMessage(content="read a.py and b.py")]
    events = [e async for e in provider.stream(tool_request("gpt-5", history, effort="high"))]
    summary = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert summary == "The user wants two files; read both at once."
    first = await collect(replay(events))
    assert [c.arguments_json for c in first.tool_calls] == [{"path": "a.py"}, {"path": "b.py"}]
    [part] = first.reasoning
    assert part.kind == "reasoning" and part.data and part.id and part.text == summary
    assert first.usage.reasoning_tokens and first.usage.output_tokens > first.usage.reasoning_tokens

    second = await collect(provider.stream(tool_request("gpt-5", answered(history, first))))
    assert second.content == "Both read."
    sent = server.requests[-1].json
    assert sent["store"] is False and sent["include"] == ["reasoning.encrypted_content"]
    assert sent["reasoning"] == {"effort": "medium", "summary": "auto"}
    kinds = [item.get("type") or item["role"] for item in sent["input"]]
    assert kinds == ["user", "reasoning", "message", "function_call", "function_call",
                     "function_call_output", "function_call_output"]  # fmt: skip
    assert sent["input"][1]["encrypted_content"] == part.data  # unchanged
    assert server.requests[0].json["reasoning"]["effort"] == "high"


async def test_a_changed_reasoning_item_is_refused_as_the_api_refuses_it(
    server: FakeLlmServer,
) -> None:
    server.add(Turn(thinking="hm", tool_calls=[FakeToolCall("file_read", {"path": "a"})]))
    provider = provider_for("openai", server)
    history: list[Message] = [UserMessage(content="go")]
    first = await collect(provider.stream(tool_request("gpt-5", history)))
    forged = first.reasoning[0].model_copy(update={"data": "sig_forged"})
    first.reasoning = [forged]
    server.add(Turn(text="never"))
    with pytest.raises(LlmError) as caught:
        await collect(provider.stream(tool_request("gpt-5", answered(history, first))))
    assert caught.value.status == 400 and "could not be verified" in str(caught.value)


async def test_another_models_reasoning_is_left_out_cleanly(server: FakeLlmServer) -> None:
    server.add(Turn(thinking="hm", tool_calls=[FakeToolCall("file_read", {"path": "a"})]))
    provider = provider_for("openai", server)
    history: list[Message] = [UserMessage(content="go")]
    first = await collect(provider.stream(tool_request("gpt-5", history)))
    server.add(Turn(text="fine"))
    later = await collect(provider.stream(tool_request("gpt-5-mini", answered(history, first))))
    assert later.content == "fine"
    kinds = [item.get("type") or item["role"] for item in server.requests[-1].json["input"]]
    assert kinds == ["user", "function_call", "function_call_output"]


async def test_a_model_that_does_not_reason_gets_no_reasoning_fields(
    server: FakeLlmServer,
) -> None:
    server.add(Turn(text="hi"))
    provider = provider_for("openai", server)
    await collect(
        provider.stream(tool_request("gpt-4.1", [UserMessage(content="hi")], temperature=0.2))
    )
    sent = server.requests[-1].json
    assert "reasoning" not in sent and "include" not in sent and sent["temperature"] == 0.2


async def test_the_thread_id_is_the_prompt_cache_key(server: FakeLlmServer) -> None:
    server.add(Turn(text="hi"))
    provider = provider_for("openai", server)
    await collect(
        provider.stream(tool_request("gpt-5", [UserMessage(content="hi")], cache_key="T-1"))
    )
    assert server.requests[-1].json["prompt_cache_key"] == "T-1"


async def test_images_go_as_input_images(server: FakeLlmServer) -> None:
    import hashlib

    data = b"\x89PNG fake"
    image = ImageRef(
        sha256=hashlib.sha256(data).hexdigest(), media_type="image/png", name="shot.png", size=10
    ).with_data(data)
    history: list[Message] = [UserMessage(content="what is this", images=[image])]
    server.add(Turn(text="a picture"))
    await collect(provider_for("openai", server).stream(tool_request("gpt-5", history)))
    [user] = server.requests[-1].json["input"]
    assert [part["type"] for part in user["content"]] == ["input_text", "input_image"]
    assert user["content"][1]["image_url"].startswith("data:image/png;base64,")


async def test_a_codex_model_on_chat_completions_says_what_to_set(server: FakeLlmServer) -> None:
    """A codex model the catalog does not know yet: the API's 404, with what to set."""
    provider = provider_for("openai", server, api="chat")
    with pytest.raises(LlmError) as caught:
        await collect(provider.stream(tool_request("gpt-5.9-codex", [UserMessage(content="hi")])))
    said = str(caught.value)
    assert caught.value.status == 404 and CODEX_404 in said
    assert 'set api = "responses" under [providers.openai]' in said
    assert not caught.value.transient


async def test_a_catalogued_codex_model_is_not_sent_to_chat_completions(
    server: FakeLlmServer,
) -> None:
    provider = provider_for("openai", server, api="chat")
    with pytest.raises(LlmError) as caught:
        await collect(provider.stream(tool_request("gpt-5-codex", [UserMessage(content="hi")])))
    assert "served only by the Responses API" in str(caught.value)
    assert 'set api = "responses" under [providers.openai]' in str(caught.value)
    assert not caught.value.transient and server.requests == []


async def test_a_cut_off_answer_stops_for_max_tokens(server: FakeLlmServer) -> None:
    server.add(Turn(text="partial", stop_reason="max_tokens"))
    response = await collect(
        provider_for("openai", server).stream(tool_request("gpt-5", [UserMessage(content="go")]))
    )
    assert response.stop_reason == "max_tokens" and response.content == "partial"


async def test_chat_completions_takes_the_effort_too(server: FakeLlmServer) -> None:
    server.add(Turn(text="ok"), Turn(text="ok"))
    provider = provider_for("openai", server, api="chat")
    for model in ("gpt-5", "gpt-4.1"):
        await collect(
            provider.stream(tool_request(model, [UserMessage(content="hi")], effort="low"))
        )
    first, second = (r.json for r in server.requests)
    assert first["reasoning_effort"] == "low" and "reasoning_effort" not in second
