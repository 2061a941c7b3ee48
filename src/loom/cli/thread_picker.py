"""`loom resume` without an id: pick a thread with the arrow keys, type to filter.

Each row shows the title, how long ago it was active, the git branch and the first
words of the conversation. Enter opens the highlighted thread, Esc or Ctrl-C cancels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyPressEvent

VISIBLE_ROWS = 12


def matches(thread: Any, words: list[str]) -> bool:
    haystack = " ".join(
        str(part or "") for part in (thread.title, thread.git_branch, thread.first_words, thread.id)
    ).lower()
    return all(word in haystack for word in words)


def row_text(thread: Any, width: int) -> str:
    from loom.core.clock import humanize_age
    from loom.core.text import visible

    # a thread's title, branch and words came from a model, a repository, a person:
    # shown, never acted on (a bidi override would reorder the row)
    age = humanize_age(thread.last_activity_at)
    branch = f" · {visible(thread.git_branch)}" if thread.git_branch else ""
    count = thread.message_count
    said = f"{count} message" + ("" if count == 1 else "s")
    head = f"{visible(thread.title)}  ({age}{branch}, {said})"
    first = " ".join(str(thread.first_words or "").split())
    words = visible(first) if thread.first_words != thread.title else ""
    text = f"{head}  {words}" if words else head
    return text if len(text) <= width else text[: width - 1] + "…"


async def pick_thread(threads: list[Any]) -> str | None:
    """The id of the thread the person picked, or None when they cancelled."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.formatted_text import FormattedText
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl

    state = {"selected": 0}
    query = Buffer(multiline=False)

    def shown() -> list[Any]:
        words = query.text.lower().split()
        return [t for t in threads if matches(t, words)]

    def reset_selection(_buffer: Any) -> None:
        state["selected"] = 0

    query.on_text_changed += reset_selection

    def rows() -> FormattedText:
        import shutil

        width = shutil.get_terminal_size((100, 24)).columns - 4
        found = shown()
        if not found:
            return FormattedText([("fg:ansiyellow", "  no thread matches; Backspace to widen")])
        selected = min(state["selected"], len(found) - 1)
        start = max(0, selected - VISIBLE_ROWS + 1)
        parts: list[tuple[str, str]] = []
        for index, thread in enumerate(found[start : start + VISIBLE_ROWS], start):
            mark, style = ("› ", "reverse") if index == selected else ("  ", "")
            parts.append((style, f"{mark}{row_text(thread, width)}\n"))
        parts.append(("fg:ansibrightblack", f"  {len(found)} of {len(threads)} threads"))
        return FormattedText(parts)

    bindings = KeyBindings()

    @bindings.add("up")
    def _up(event: KeyPressEvent) -> None:
        state["selected"] = max(state["selected"] - 1, 0)

    @bindings.add("down")
    def _down(event: KeyPressEvent) -> None:
        state["selected"] = min(state["selected"] + 1, max(len(shown()) - 1, 0))

    @bindings.add("enter")
    def _open(event: KeyPressEvent) -> None:
        found = shown()
        if found:
            event.app.exit(result=found[min(state["selected"], len(found) - 1)].id)

    @bindings.add("escape", eager=True)
    @bindings.add("c-c")
    @bindings.add("c-d")
    def _cancel(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    layout = Layout(
        HSplit(
            [
                Window(
                    FormattedTextControl(
                        "Resume which thread? (↑/↓ to move, type to filter, Enter opens, "
                        "Esc cancels)\n"
                    ),
                    height=2,
                ),
                Window(BufferControl(query), height=1, get_line_prefix=lambda *_: "filter › "),
                Window(FormattedTextControl(rows), dont_extend_height=True),
            ]
        ),
        focused_element=query,
    )
    app: Application[str | None] = Application(
        layout=layout, key_bindings=bindings, full_screen=False, erase_when_done=True
    )
    return await app.run_async()
