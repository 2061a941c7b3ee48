"""A small Loom plugin for the tests, registered as entry points in `loom.tools` (see
the dist-info beside it): `shout` gives one tool and a session cleanup, `broken` fails."""

from __future__ import annotations

from typing import Any, ClassVar

from loom.tools.base import ToolContext, ToolResult, ToolSetup

HYPOTHESIS = "a guess the work will test"  # a `loom.node_types` plugin: its description


class Shout:
    name = "shout"
    description = "Say the text back in capitals."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }
    risk = "read"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(str(args.get("text", "")).upper())

    def permission_subject(self, args: dict[str, Any]) -> str | None:
        return None


def provide(setup: ToolSetup) -> list[Shout]:
    marker = setup.paths.data / "shout-closed.txt"

    def closed() -> None:  # the session stopped: record which one
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(setup.session_id)

    setup.on_close(closed)
    return [Shout()]


def broken(setup: ToolSetup) -> list[Any]:
    raise RuntimeError("this plugin has a bug")


def echo_provider(**settings: Any) -> Any:
    """A `loom.providers` plugin: models named `echo:<anything>` answer from a script."""
    from loom.llm.scripted import ScriptedProvider

    return ScriptedProvider(["the echo provider plugin answered"])


def parrot_provider(
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    timeout: float = 600.0,
    greeting: str = "hello",
) -> Any:
    """A `loom.providers` plugin with a setting of its own: `parrot:<anything>` answers
    with what its `[providers.parrot]` table gave the factory."""
    from loom.llm.scripted import ScriptedProvider

    key = "a key" if api_key else "no key"
    return ScriptedProvider([f"{greeting} from {base_url} with {key}"])
