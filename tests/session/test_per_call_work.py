"""A model call looks only at what is new: the work per call does not grow with the
conversation (counts, never timings)."""

from __future__ import annotations

from pathlib import Path

from loom.core.images import image_ref
from loom.core.messages import AssistantMessage, UserMessage
from loom.llm.scripted import ScriptedProvider, ScriptedTurn, tool_turn
from loom.session.runtime.image_loading import ImageLoader
from loom.store.images import ImageStore
from tests.support.images import png
from tests.support.sessions import ANY_MODEL, NoopTool, make_workspace, only


async def test_each_call_looks_for_images_only_in_new_messages(tmp_path: Path) -> None:
    turns = 40
    script = []
    for n in range(turns):
        script += [tool_turn("noop", id=f"c{n}"), ScriptedTurn(text=f"done {n}")]
    ws = make_workspace(tmp_path, ScriptedProvider(script))
    session = await ws.start_session(only(NoopTool(), model=ANY_MODEL, auto_approve=True))
    looked_at = []
    for n in range(turns):
        assert await session.send_message(f"step {n}") == f"done {n}"
        looked_at.append(session.llm.images.looked_at)
    assert len(session.get_history()) == 4 * turns
    # each call sees the two messages added since the last one, not all 160
    assert max(looked_at[1:]) <= 2
    await ws.shutdown()


async def test_images_of_a_resumed_or_rewound_history_are_loaded(tmp_path: Path) -> None:
    store = ImageStore(tmp_path / "images")
    stored = image_ref("shot.png", png(seed=3))
    store.put(stored)

    def reference() -> UserMessage:  # as a resumed thread holds it: no bytes yet
        ref = type(stored).model_validate(stored.model_dump())
        assert ref.data is None
        return UserMessage(content="look", images=[ref])

    loader = ImageLoader()
    first = [reference(), AssistantMessage(content="seen")]
    await loader.load(first, store)
    assert first[0].images[0].data == png(seed=3) and loader.looked_at == 2
    grown = [*first, reference()]
    await loader.load(grown, store)
    assert loader.looked_at == 1 and grown[2].images[0].data == png(seed=3)
    rewound = [reference()]  # another history (a rewind): looked at from the start
    await loader.load(rewound, store)
    assert rewound[0].images is not None
    assert loader.looked_at == 1 and rewound[0].images[0].data == png(seed=3)
