"""The REPL's permission question: show what would happen, then read one key.

    Edit calc.py
      --- a/calc.py
      +++ b/calc.py
      @@ -1,2 +1,2 @@ ...
    Allow? [y] once  [a] always: file_edit on calc.py in this project  [n] deny (Esc)

A shell command is shown whole with the folder it runs in, and `[p]` lets the person
type the command prefix a grant covers. Long bodies are folded; `[v]` pages them whole.

What is shown is exactly what would run: every line break of a command ends its line
with `↵`, and a control character, escape sequence or bidi override is written as its
escape (`\x1b[1A`), so no command can redraw the question to pass for another.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.text import Text

from loom.cli.permission_keys import DENY, INTERRUPT, read_answer
from loom.core.text import visible, visible_block

if TYPE_CHECKING:
    from loom.core.events import PermissionRequest
    from loom.session import Session

FOLD_LINES = 30  # body lines shown before the rest is folded behind [v]
APPLIED_DIFF_LINES = 20  # lines of an applied edit's diff shown after it ran
GENERIC_REASON = "needs your approval"  # the policy's reason when nothing is special
LINE_BREAK = "↵"  # ends each line of a command that goes on to the next


@dataclass
class Answer:
    action: str  # allow_once | allow_always | deny
    meta: dict[str, Any] = field(default_factory=dict)
    interrupt: bool = False  # Ctrl-C: also stop the turn
    said: str = ""  # what the REPL prints as the answer


def body_lines(body: str) -> list[str]:
    """The lines of a body, split at newlines only (a carriage return or a form feed is
    part of its line, shown as its escape)."""
    lines = body.split("\n")
    return lines[:-1] if lines and not lines[-1] else lines


def styled_body(body: str, kind: str) -> Text:
    """A diff coloured by line, anything else as plain text (never parsed as markup);
    a command's lines with their breaks marked and every control character shown."""
    text = Text()
    lines = body_lines(body)
    for number, line in enumerate(lines, 1):
        if kind == "command":
            text.append("  " + visible(line), style="bold")
            if number < len(lines) or body.endswith("\n"):
                text.append(LINE_BREAK, style="dim")
            text.append("\n")
            continue
        line = visible_block(line.removesuffix("\r"))  # a CRLF file's line end is no news
        style = ""
        if kind == "diff":
            if line.startswith(("+++", "---")):
                style = "bold"
            elif line.startswith("+"):
                style = "green"
            elif line.startswith("-"):
                style = "red"
            elif line.startswith("@@"):
                style = "cyan"
        text.append("  " + line + "\n", style=style)
    return text


def folded(body: str, limit: int) -> tuple[str, int]:
    """(the first `limit` lines, how many more there are)."""
    lines = body_lines(body)
    if len(lines) <= limit:
        return body, 0
    return "\n".join(lines[:limit]) + "\n", len(lines) - limit  # (a command goes on: ↵)


class ApprovalPrompt:
    def __init__(self, renderer: Any, interactive: bool) -> None:
        self.renderer = renderer
        self.interactive = interactive

    async def ask(self, session: Session, event: PermissionRequest) -> Answer:
        from loom.session import approval_view

        view = approval_view(session, event.tool_name, event.arguments)
        self.show(view, event)
        keys = {"y": "allow_once", "a": "allow_always", "n": "deny"}
        more = folded(view.body, FOLD_LINES)[1]
        if more:
            keys["v"] = "view"
        if view.may_type_prefix and self.interactive:
            keys["p"] = "prefix"
        question = self.question(view, more)
        while True:
            result = await read_answer(question, keys, interactive=self.interactive)
            if result == "view":
                await self.page(view.title, view.body)
                continue
            if result == "prefix":
                answer = await self.ask_prefix(session, event)
                if answer is None:
                    continue  # Esc or an empty prefix: back to the question
                return answer
            if result == INTERRUPT:
                return Answer(DENY, interrupt=True, said="deny (and stop the turn)")
            if result == "allow_always":
                return Answer(result, said=f"allow always: {visible(view.grant)}")
            return Answer(result, said=result.replace("_", " "))

    def show(self, view: Any, event: PermissionRequest) -> None:
        line = self.renderer.line
        line(visible(view.title), style="bold yellow")  # a file's name may hold anything
        if view.body:
            shown, more = folded(view.body, FOLD_LINES)
            self.renderer.text(styled_body(shown, view.body_kind))
            if view.body_kind in ("diff", "content") and not more:
                self.renderer.shown_before_running(event.call_id, view.body)
            if more:
                line(f"  … {more} more lines ([v] shows them all)", style="dim")
        if view.cwd:
            line(f"  in {visible(view.cwd)}", style="dim")
        sandboxed = event.sandboxed
        if sandboxed is not None:  # a command: say whether the sandbox confines it
            text = event.sandbox or ("runs sandboxed" if sandboxed else "")
            line(f"  {text or 'runs WITHOUT a sandbox'}", style="dim" if sandboxed else "yellow")
        if event.reason not in ("", GENERIC_REASON):
            line(f"  asked because: {visible(event.reason)}", style="yellow")

    def question(self, view: Any, more: int) -> str:
        extra = "  [v] view all" if more else ""
        prefix = "  [p] always, for a prefix you type" if view.may_type_prefix else ""
        if not self.interactive:
            prefix = ""
        return (
            f"Allow? [y] once  [a] always: {visible(view.grant)}\n"
            f"       {prefix.strip()}{'  ' if prefix else ''}[n] deny (Esc){extra} › "
        )

    async def page(self, title: str, body: str) -> None:
        import pydoc

        await asyncio.to_thread(pydoc.pager, f"{visible(title)}\n\n{visible_block(body)}")

    async def ask_prefix(self, session: Session, event: PermissionRequest) -> Answer | None:
        """The person types the prefix a grant covers, starting from the whole command."""
        from prompt_toolkit import PromptSession
        from prompt_toolkit.key_binding import KeyBindings

        from loom.session import grant_words, prefix_refusal

        command = " ".join(str(event.arguments.get("command", "")).split())
        bindings = KeyBindings()
        bindings.add("escape", eager=True)(lambda e: e.app.exit(result=""))
        try:
            typed = await PromptSession(key_bindings=bindings).prompt_async(
                "  prefix (Enter accepts, Esc goes back) › ",
                default=command,
                handle_sigint=False,  # keep the turn's Ctrl-C handler (see permission_keys)
            )
        except (EOFError, KeyboardInterrupt):
            return None
        typed = " ".join(typed.split())
        if not typed:
            return None
        if not (command + " ").startswith(typed + " "):
            self.renderer.line(
                f"  `{typed}` does not start this command; type a prefix of it", style="yellow"
            )
            return None
        refused = prefix_refusal(typed)
        if refused:
            self.renderer.line(f"  {refused}", style="yellow")
            return None
        words = grant_words(session, event.tool_name, event.arguments, scope=typed)
        return Answer("allow_always", {"scope": typed}, said=f"allow always: {visible(words)}")


def applied_diff_lines(diff: str) -> tuple[Text, int]:
    """An applied edit's diff for the transcript, folded after APPLIED_DIFF_LINES."""
    shown, more = folded(diff, APPLIED_DIFF_LINES)
    return styled_body(shown, "diff"), more


PLAN_KEYS = {"y": "yes", "e": "edit", "n": "no"}


async def ask_plan(renderer: Any, interactive: bool) -> tuple[str, str]:
    """Architect mode: carry out the plan just shown (y), change it (e: the person says
    what), or not (n, Esc). Ctrl-C is a no as well."""
    question = "Carry out this plan? [y] yes  [e] edit (say what to change)  [n] no (Esc) › "
    result = await read_answer(question, PLAN_KEYS, interactive=interactive)
    if result == "edit":
        change = await _read_change(interactive)
        renderer.line(f"  → change the plan: {change}" if change else "  → no", style="dim")
        return ("edit", change) if change else ("no", "")
    verdict = result if result in ("yes", "no") else "no"
    renderer.line(f"  → {verdict}", style="dim")
    return verdict, ""


async def _read_change(interactive: bool) -> str:
    prompt = "  what should change? (Enter sends, Esc cancels) › "
    if not interactive:
        import sys

        sys.stdout.write(prompt)
        sys.stdout.flush()
        return (await asyncio.to_thread(sys.stdin.readline)).strip()
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()
    bindings.add("escape", eager=True)(lambda e: e.app.exit(result=""))
    try:
        session: PromptSession[str] = PromptSession(key_bindings=bindings)
        return (await session.prompt_async(prompt, handle_sigint=False)).strip()
    except (EOFError, KeyboardInterrupt):
        return ""
