"""Every face handles every session event type: one instance of each member of the
`SessionEvent` union (each message kind for `new_message`) goes through the web page's
payloads, the REPL's renderer, ACP's updates and `loom run`'s stream-json lines.

The real check is basedpyright: each face dispatches with `match event: ... case _:
assert_never(event)`, so an event type without a case fails `scripts/test` before any
test runs. This test says the same at run time, and that no case raises."""

from __future__ import annotations

import io
import json
import types
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from loom.core.events import SessionEvent
from loom.llm.scripted import ScriptedProvider
from tests.support.sessions import NoopTool, make_workspace, only


def _members(annotation: Any) -> tuple[Any, ...]:
    """The classes of a union, through `Annotated[...]`."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _samples(annotation: Any, name: str) -> list[Any]:
    """Values for a required field: one, or one per member of a union of models."""
    if typing.get_origin(annotation) is Literal:
        return [typing.get_args(annotation)[0]]
    members = _members(annotation)
    if len(members) > 1:
        return [value for member in members for value in _samples(member, name)]
    if annotation is str:
        return [f"{name} text"]
    if annotation is bool:
        return [False]
    if annotation in (int, float):
        return [annotation(1)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [_build(annotation)[0]]
    raise AssertionError(f"no sample for {name}: {annotation!r}; add one here")


def _build(cls: type[BaseModel]) -> list[Any]:
    """Instances of `cls` with every required field filled; one per sample of a field
    that has several (a `new_message` of each message kind)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    required = {n: _samples(hints[n], n) for n, f in cls.model_fields.items() if f.is_required()}
    first = {name: values[0] for name, values in required.items()}
    built = [cls(**first)]
    for name, values in required.items():
        built += [cls(**{**first, name: value}) for value in values[1:]]
    return built


EVENT_TYPES = _members(SessionEvent)
EVENTS = [event for cls in EVENT_TYPES for event in _build(cls)]


def test_the_samples_cover_the_union() -> None:
    assert len(EVENT_TYPES) >= 24
    assert {type(e) for e in EVENTS} == set(EVENT_TYPES)
    kinds = {e.message.role for e in EVENTS if e.type == "new_message"}
    assert kinds == {"user", "assistant", "tool", "system"}


async def test_every_face_handles_every_event(tmp_path: Path) -> None:
    from loom.acp.live import LiveSession as AcpLive
    from loom.cli.chat_render import EventRenderer
    from loom.cli.run.output.writers import StreamJsonWriter, stream_json_line
    from loom.cli.terminal import SafeConsole
    from loom.web.live import Hub
    from loom.web.payloads import payload_for
    from tests.support.acp import RecordingClient

    ws = make_workspace(tmp_path, ScriptedProvider([]))
    session = await ws.start_session(only(NoopTool()))
    web = Hub().add(session)
    screen = io.StringIO()
    repl = EventRenderer(SafeConsole(file=screen), tools=session.tools, project_root=tmp_path)
    acp = AcpLive(ws, session, RecordingClient(), None)
    out = io.StringIO()
    stream = StreamJsonWriter(out, partial_messages=True)
    try:
        payload_types: set[str] = set()
        for event in EVENTS:
            payload = payload_for(web, event)
            if payload is not None:
                payload_types.add(json.loads(json.dumps(payload))["type"])
            repl.render(event)
            assert isinstance(acp._updates_for(event), list)
            line = stream_json_line(event, partial_messages=True)
            assert line is None or json.loads(json.dumps(line))["type"]
            stream.event(event)
        repl.finish()
    finally:
        await acp.close()
        await ws.shutdown()
    assert {"delta", "message", "tool_done", "plan", "turn_done"} <= payload_types
    assert "error (Llm): message text" in screen.getvalue()
    lines = [json.loads(line)["type"] for line in out.getvalue().splitlines()]
    assert {"assistant", "user", "stream_event", "loom.tool_executing"} <= set(lines)
