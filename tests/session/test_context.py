"""Context window: zone budgets, whole-turn pruning, calls never split from results."""

from __future__ import annotations

from loom.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from loom.llm.base import ToolSpec
from loom.llm.scripted import ScriptedProvider, tool_turn
from loom.session.runtime.context import LOW_WATER, ContextWindow
from loom.session.runtime.repo_map import fetch_repo_map, focus_of
from tests.support.sessions import EchoTool, make_workspace, only


def turn(n: int, size: int = 200) -> list:
    call = ToolCall(id=f"c{n}", tool_name="echo", arguments_json={"text": "x"})
    return [
        UserMessage(content=f"question {n} " + "word " * size),
        AssistantMessage(content="", tool_calls=[call]),
        ToolMessage(tool_call_id=f"c{n}", tool_name="echo", content="result " * size),
        AssistantMessage(content=f"answer {n}"),
    ]


def window(size: int, **kw) -> ContextWindow:
    return ContextWindow(context_window=size, reserved_output=500, system_prompt="sys", **kw)


def test_everything_fits_nothing_pruned() -> None:
    conversation = turn(1) + turn(2)
    built = window(100_000).build(conversation)
    assert built.messages == conversation
    assert built.budget.omitted_messages == 0
    assert built.system == "sys"


def test_a_history_that_fits_for_sure_is_not_counted(monkeypatch) -> None:
    from loom.session.runtime import context

    counted = []
    real = context.estimate_message_tokens
    monkeypatch.setattr(context, "estimate_message_tokens", lambda m: counted.append(m) or real(m))
    ctx = window(100_000)
    conversation: list = []
    built = None
    for n in range(5):
        conversation += turn(n)
        built = ctx.build(conversation)
        assert built.messages == conversation and built.budget.omitted_messages == 0
    assert (
        built is not None and counted == []
    )  # its length in characters bounds its tokens: nothing to count
    assert ctx.counting_work(conversation) == 0
    assert built.budget.history_used == sum(real(m) for m in conversation)  # when asked
    small = window(1_500)  # the same history does not fit here: counted, once each
    assert small.counting_work(conversation) > 0
    counted.clear()
    assert small.build(conversation).budget.omitted_messages > 0
    assert len(counted) == len(conversation)


def test_old_turns_are_dropped_whole_and_the_thread_keeps_them() -> None:
    conversation = [m for n in range(10) for m in turn(n)]
    ctx = window(2_000)
    built = ctx.build(conversation)
    assert 0 < built.budget.omitted_messages < len(conversation)
    assert isinstance(built.messages[0], UserMessage)  # starts at a turn boundary
    assert built.messages[-1] is conversation[-1]
    assert built.budget.history_used <= built.budget.history_budget
    assert "earlier message(s)" in built.context and built.system == "sys"
    assert len(conversation) == 40  # pruning never touches the conversation itself
    # calls and results stay together
    ids = {c.id for m in built.messages if isinstance(m, AssistantMessage) for c in m.tool_calls}
    results = {m.tool_call_id for m in built.messages if isinstance(m, ToolMessage)}
    assert ids == results


def test_growing_conversation_reuses_counts_and_prunes_more_over_time() -> None:
    ctx = window(3_000)
    conversation: list = []
    omitted = []
    for n in range(12):
        conversation += turn(n)
        built = ctx.build(conversation)
        omitted.append(built.budget.omitted_messages)
        assert isinstance(built.messages[0], UserMessage)
    assert omitted[0] == 0 and omitted[-1] > omitted[3]
    assert omitted == sorted(omitted)


def test_an_oversized_current_turn_keeps_its_question_and_newest_rounds() -> None:
    big = [UserMessage(content="do a big job")]
    for n in range(30):
        call = ToolCall(id=f"b{n}", tool_name="echo")
        big += [
            AssistantMessage(content="", tool_calls=[call]),
            ToolMessage(tool_call_id=f"b{n}", tool_name="echo", content="data " * 100),
        ]
    built = window(2_500).build(turn(0) + big)
    assert built.messages[0].content == "do a big job"
    assert built.messages[-1] is big[-1]
    assert isinstance(built.messages[1], AssistantMessage)  # a round starts with its call
    assert 3 < len(built.messages) < len(big)


def _walked_cut(conversation: list, budget: int) -> list:
    """The current turn's cut as a plain walk over its rounds (newest first)."""
    from loom.llm.tokens import estimate_message_tokens as cost

    first = max(i for i, m in enumerate(conversation) if isinstance(m, UserMessage))
    rounds: list[list] = []
    for message in conversation[first + 1 :]:
        if isinstance(message, AssistantMessage) or not rounds:
            rounds.append([message])
        else:
            rounds[-1].append(message)
    if sum(map(cost, conversation[first:])) <= budget:  # the turn fits: kept whole
        return conversation[first:]
    left, kept = int((budget - cost(conversation[first])) * LOW_WATER), []
    for group in reversed(rounds):
        if sum(map(cost, group)) > left and kept:
            break
        kept.append(group)
        left -= sum(map(cost, group))
    return [conversation[first], *(m for group in reversed(kept) for m in group)]


def test_the_current_turn_is_cut_as_a_walk_over_its_rounds_would_cut_it() -> None:
    import random

    rng = random.Random(25)
    cut = 0
    for trial in range(60):
        conversation = turn(0, size=rng.choice([5, 50]))
        conversation.append(UserMessage(content="go " * rng.randrange(1, 400)))
        if rng.random() < 0.2:  # a result first: a round need not start with a call
            conversation.append(ToolMessage(tool_call_id="x", tool_name="echo", content="r"))
        for n in range(rng.randrange(0, 40)):
            calls = [ToolCall(id=f"t{n}-{k}", tool_name="echo") for k in range(rng.randrange(3))]
            conversation.append(
                AssistantMessage(content="a " * rng.randrange(30), tool_calls=calls)
            )
            for call in calls:
                size = rng.choice([1, 20, 300, 2000])
                conversation.append(
                    ToolMessage(tool_call_id=call.id, tool_name="echo", content="d " * size)
                )
        ctx = window(rng.choice([900, 1_500, 3_000, 8_000]))
        built = ctx.build(conversation)
        if built.budget.omitted_messages and built.messages[0] is conversation[5 - 1]:
            budget = ctx._zones((), "", "", "", "").budget
            assert built.messages == _walked_cut(conversation, budget), trial
            cut += 1
    assert cut >= 15  # the trials reach the cut, with a few rounds kept and with one


def test_a_long_turn_past_the_window_counts_each_message_once(monkeypatch) -> None:
    from loom.session.runtime import context

    counted = []
    real = context.estimate_message_tokens
    monkeypatch.setattr(context, "estimate_message_tokens", lambda m: counted.append(m) or real(m))
    ctx = window(3_000)
    conversation: list = [UserMessage(content="run the whole migration")]
    built = None
    for n in range(400):  # an autonomous run: one turn, many tool rounds
        call = ToolCall(id=f"m{n}", tool_name="echo")
        conversation += [
            AssistantMessage(content="", tool_calls=[call]),
            ToolMessage(tool_call_id=f"m{n}", tool_name="echo", content="row " * 80),
        ]
        built = ctx.build(conversation)
    # before: the turn's cut counted every message of the turn again on every step
    assert built is not None and len(counted) == len(conversation)
    assert built.messages[0] is conversation[0] and built.messages[-1] is conversation[-1]
    assert 2 < len(built.messages) < 100


def test_zones_are_budgeted_rules_and_repo_map_included() -> None:
    tools = [ToolSpec("echo", "echo text", {"type": "object", "properties": {}})]
    ctx = window(8_000, rules="Always run the tests.", repo_map_tokens=100)
    built = ctx.build(turn(1), tools, "src/app.py: main()\n" * 500)
    assert "Always run the tests." in built.system and "# Repository map" in built.context
    assert "# Repository map" not in built.system  # the map changes per call: not the prefix
    assert built.budget.repo_map <= 120 and built.budget.tools > 0 and built.budget.rules > 0
    assert built.budget.reserved_output == 500
    assert "# Repository map" not in ctx.build(turn(1), tools, "").context


def test_focus_comes_from_tool_paths_and_mentions_from_the_user() -> None:
    conversation = [
        UserMessage(content="Fix parse_config in src/config.py and the LoomConfig class"),
        AssistantMessage(
            content="",
            tool_calls=[
                ToolCall(id="1", tool_name="file_read", arguments_json={"path": "src/app.py"})
            ],
        ),
    ]
    files, mentions = focus_of(conversation)
    assert files == ["src/app.py"]  # read by a tool: the map shows what it uses
    # named by the person: ranked first, never dropped as already seen
    assert mentions == ["src/config.py", "parse_config", "LoomConfig"]
    read_then_named = [*conversation, UserMessage(content="now @./src/app.py too")]
    files, mentions = focus_of(read_then_named)
    assert files == [] and mentions[:2] == ["src/app.py", "src/config.py"]


async def test_a_slow_or_broken_map_is_skipped() -> None:
    import time

    def slow(budget, files, identifiers) -> str:
        time.sleep(0.3)
        return "late"

    def broken(budget, files, identifiers) -> str:
        raise RuntimeError("parser exploded")

    assert await fetch_repo_map(slow, 100, turn(1), timeout=0.05) == ""
    assert await fetch_repo_map(broken, 100, turn(1), timeout=5) == ""
    seen = []

    def good(budget, files, identifiers) -> str:
        seen.append((budget, files))
        return "map"

    assert await fetch_repo_map(good, 100, turn(1), timeout=5) == "map"
    assert seen == [(100, [])]


async def test_the_session_sends_the_repo_map_with_its_focus(tmp_path) -> None:
    calls = []

    def hook(budget, files, identifiers) -> str:
        calls.append((budget, files, identifiers))
        return "src/auth.py:\n  def login()"

    provider = ScriptedProvider([tool_turn("echo", {"text": "x", "path": "src/auth.py"}), "ok"])
    ws = make_workspace(tmp_path, provider, repo_map=hook, repo_map_tokens=300)
    session = await ws.start_session(only(EchoTool()))
    await session.send_message("look at login_user")
    assert "def login()" in provider.requests[0].context
    assert calls[0] == (300, [], ["login_user"])
    assert calls[1] == (300, ["src/auth.py"], ["login_user"])
    await ws.shutdown()


async def test_a_session_sends_pruned_history_but_saves_all(tmp_path) -> None:
    script = []
    for n in range(8):
        script += [tool_turn("echo", {"text": "long " * 300}, id=f"k{n}"), f"answer {n}"]
    provider = ScriptedProvider(script)
    no_summaries = {"context.compaction": False}  # old turns are dropped, not summarised
    ws = make_workspace(tmp_path, provider, config=no_summaries, max_context_tokens=6_000,
                        reserved_output_tokens=1_000)  # fmt: skip
    session = await ws.start_session(only(EchoTool()))
    for n in range(8):
        await session.send_message(f"question {n} " + "filler " * 600)
    last = provider.requests[-1]
    assert last.messages[0].role == "user"
    assert len(last.messages) < len(session.get_history()) - 8
    assert len(session.get_history()) == 8 * 4
    seen = [last.context, *(m.content for m in last.messages)]  # blocks stay in the history
    assert any("earlier message(s)" in text for text in seen)
    await ws.shutdown()


def test_history_past_the_window_is_cut_in_steps_to_the_low_water_mark() -> None:
    from loom.llm.tokens import estimate_message_tokens

    ctx = window(3_000)
    conversation: list = []
    starts = []
    for n in range(40):
        conversation += turn(n, size=60)
        built = ctx.build(conversation)
        first = built.messages[0]
        if not starts or starts[-1][1] is not first:
            sent = sum(estimate_message_tokens(m) for m in built.messages)
            starts.append((n, first, sent, built.budget.history_budget))
    # a few cuts, each down to the low-water mark; the calls between share their start
    assert 2 <= len(starts) - 1 <= 8, [s[0] for s in starts]
    for _n, _first, sent, budget in starts[1:]:
        assert sent <= budget * LOW_WATER
