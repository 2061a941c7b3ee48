"""The REPL's slash commands. Custom ones come from `.loom/commands/NAME.md` in the
project: `/NAME words` sends the file's text as the message, with `$ARGUMENTS` replaced
by the words (or the words appended when the file has no `$ARGUMENTS`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

BUILTIN = {
    "/model": "[NAME]  show the model, or switch to NAME (provider:model-id; Tab completes)",
    "/effort": "[LEVEL]  how hard a reasoning model thinks: minimal, low, medium, high",
    "/thinking": "show the model's thinking whole as it streams (again, or Ctrl-O: fold it)",
    "/architect": "plan with the strong model, carry out each step with the fast one",
    "/normal": "back to the normal agent loop",
    "/shells": "[kill ID]  the agent's background commands: id, state, running time, command",
    "/mode": "[NAME]  the permission mode: default, acceptEdits, plan, bypassPermissions "
    "(Shift-Tab cycles the first three)",
    "/diff": "what this thread changed in the project since its starting commit",
    "/cost": "tokens and cost of this session",
    "/context": "where the context window goes: system, tools, instructions, map, messages",
    "/clear": "start a new thread (this one is kept: loom resume ID)",
    "/init": "write a starting AGENTS.md for this project from the repo map",
    "/permissions": "[revoke ID]  the 'allow always' grants of this project",
    "/decisions": "[pulse | ID]  the project's decision graph: goals, decisions, health",
    "/mcp": "[approve NAME]  this session's MCP servers; start one the project defines",
    "/skills": "the skills the agent can load (.loom/skills, .claude/skills, yours)",
    "/agents": "the agents the agent can hand work to with its task tool",
    "/history": "show this conversation",
    "/continue": "carry on a turn that stopped before the model answered (after a crash)",
    "/help": "this list",
    "/exit": "leave (Ctrl-D does the same); the thread is saved",
}
DIFF_PAGE_LINES = 60  # a longer /diff goes through the pager
MAX_NEW_FILES = 50  # untracked files /diff shows whole


def undo_commands() -> list[str]:
    from loom.cli.repl.undo import SLASH_COMMANDS

    return list(SLASH_COMMANDS)


COMMANDS_FOLDER = ".loom/commands"


def custom_commands(project_root: Path) -> dict[str, str]:
    """`/name` -> its file (relative to the project), for every `.loom/commands/*.md`.
    Read them with `read_command`: confined to the project like the file tools."""
    from loom.session import project_text_files

    names = project_text_files(project_root, COMMANDS_FOLDER, ".md")
    return {f"/{n[:-3]}": f"{COMMANDS_FOLDER}/{n}" for n in names if " " not in n}


def read_command(project_root: Path, rel: str) -> str:
    """The text of a custom command's file. OSError (OutsideProject for a symlink that
    leads out of the project, such as one to ~/.ssh/id_rsa) when it cannot be read."""
    from loom.session import read_project_text

    text = read_project_text(project_root, rel)
    if text is None:
        raise FileNotFoundError(f"{rel} is gone")
    return text


def expand_custom(text: str, arguments: str) -> str:
    if "$ARGUMENTS" in text:
        return text.replace("$ARGUMENTS", arguments)
    return f"{text.rstrip()}\n\n{arguments}" if arguments else text


class SlashCommands:
    def __init__(self, repl: Any) -> None:
        self.repl = repl

    @property
    def line(self) -> Callable[..., None]:
        return self.repl.renderer.line

    @property
    def root(self) -> Path:
        return Path(self.repl.session.project_root)

    def names(self) -> list[str]:
        return [*BUILTIN, "/quit", *undo_commands(), *custom_commands(self.root)]

    async def run(self, text: str) -> bool:
        """Run one slash command; False means leave."""
        name, _, arg = text.partition(" ")
        arg = arg.strip()
        if name in ("/exit", "/quit"):
            return False
        handlers: dict[str, Callable[[str], Awaitable[None]]] = {
            "/help": self.help,
            "/model": self.model,
            "/effort": self.effort,
            "/thinking": self.thinking,
            "/architect": self.mode,
            "/normal": self.mode,
            "/history": self.history,
            "/continue": self.carry_on,
            "/diff": self.diff,
            "/cost": self.cost,
            "/context": self.context,
            "/clear": self.clear,
            "/init": self.init,
            "/permissions": self.permissions,
            "/mode": self.permission_mode,
            "/shells": self.shells,
            "/decisions": self.decisions,
            "/mcp": self.mcp,
            "/skills": self.skills,
            "/agents": self.agents,
        }
        try:
            await self._dispatch(name, arg, handlers)
        except Exception as exc:  # a broken command must never end the REPL
            self.line(f"error: {name} failed: {exc}", style="yellow")
        return True

    async def _dispatch(
        self, name: str, arg: str, handlers: dict[str, Callable[[str], Awaitable[None]]]
    ) -> None:
        handler = handlers.get(name)
        if name in ("/architect", "/normal"):
            await self.mode(name[1:])
        elif handler is not None:
            await handler(arg)
        elif name in undo_commands():  # /undo /redo /rewind /compact (undo.py)
            from loom.cli.repl.undo import run_slash

            await run_slash(self.repl, name, arg)
        elif name in custom_commands(self.root):
            await self.custom(name, arg)
        else:
            self.line(f"unknown command {name}; /help lists them", style="yellow")

    async def help(self, _arg: str) -> None:
        from loom.cli.repl.undo import HELP

        listed = dict(BUILTIN)
        last = {name: listed.pop(name) for name in ("/help", "/exit") if name in listed}
        for name, what in {**listed, **HELP, **last}.items():  # HELP: /undo ... /compact
            self.line(f"{name:<13} {what}")
        for name, rel in custom_commands(self.root).items():
            self.line(f"{name:<13} {_first_line(self.root, rel)}  ({rel})")
        self.line("Ctrl-C interrupts the current turn; Tab completes commands, models, paths.")

    async def skills(self, _arg: str) -> None:
        catalog = await asyncio.to_thread(self.repl.workspace.skill_catalog, self.root)
        for skill in catalog.skills.values():
            self.line(f"{skill.name:<20} {skill.description}  ({skill.label})")
        if not catalog.skills:
            self.line(
                "no skills: add .loom/skills/NAME/SKILL.md (frontmatter name and description, "
                "then the instructions), or the same under ~/.config/loom/skills/",
                style="dim",
            )
        for problem in catalog.problems:
            self.line(f"skipped: {problem}", style="yellow")

    async def agents(self, _arg: str) -> None:
        catalog = await asyncio.to_thread(self.repl.workspace.agent_catalog, self.root)
        for agent in catalog.agents.values():
            tools = f"; tools: {', '.join(agent.tools)}" if agent.tools is not None else ""
            model = f"; model: {agent.model}" if agent.model else ""
            self.line(f"{agent.name:<14} {agent.description}  ({agent.label}{tools}{model})")
        for problem in catalog.problems:
            self.line(f"skipped: {problem}", style="yellow")

    async def model(self, arg: str) -> None:
        from loom.session import LoomError

        if not arg:
            self.line(f"model: {self.repl.session.model}")
            return
        try:
            self.repl.workspace.check_model(arg)  # one line for a bad name or a missing key
            self.repl.session.update_model(arg)
            self.line(f"model: {arg}", style="magenta")
        except (LoomError, ValueError) as exc:
            self.line(f"error: {exc}", style="bold red")

    async def effort(self, arg: str) -> None:
        session = self.repl.session
        if not arg:
            self.line(f"effort: {session.effort or 'the model family default'}")
            return
        try:
            ignored = session.set_effort(None if arg == "default" else arg)
        except ValueError as exc:
            self.line(f"error: {exc}", style="bold red")
            return
        self.line(f"effort: {session.effort or 'the model family default'}", style="magenta")
        if ignored:
            self.line(ignored, style="yellow")

    async def thinking(self, _arg: str) -> None:
        self.toggle_thinking()

    def toggle_thinking(self) -> None:
        """`/thinking` and Ctrl-O: fold or unfold the model's thinking (unfolded, the last
        one is shown whole at once)."""
        from rich.text import Text

        from loom.cli.stream_echo import plain

        view = self.repl.renderer.thinking
        view.unfolded = not view.unfolded
        if not view.unfolded:
            self.line("thinking: folded to a line", style="magenta")
            return
        self.line("thinking: shown whole as it streams", style="magenta")
        if view.last:
            self.repl.renderer.line(Text(plain(view.last), style="dim italic"))

    async def mode(self, mode: str) -> None:
        from loom.session import LoomError

        try:
            self.repl.session.set_mode(mode)
        except LoomError as exc:  # architect mode without a key for its models
            self.line(f"error: {exc}", style="bold red")

    async def permission_mode(self, arg: str) -> None:
        from loom.core.permission_modes import PERMISSION_MODES

        session = self.repl.session
        if not arg:
            names = ", ".join(PERMISSION_MODES)
            self.line(f"permission mode: {session.permission_mode} (one of {names})")
            return
        try:
            session.set_permission_mode(arg)  # its event prints the line
        except ValueError as exc:
            self.line(f"error: {exc}", style="yellow")

    async def shells(self, arg: str) -> None:
        session = self.repl.session
        words = arg.split()
        if words[:1] == ["kill"] and len(words) == 2:
            try:
                self.line(_printable(await session.kill_background(words[1])))
            except ValueError as exc:
                self.line(f"error: {exc}", style="yellow")
            return
        if arg:
            self.line("use /shells, or /shells kill ID", style="yellow")
            return
        found = session.background_commands()
        if not found:
            self.line("No background commands in this session.")
            return
        for job in found:
            state = job.state if job.exit_code is None else f"{job.state} ({job.exit_code})"
            command = _printable(job.command)[:120]
            self.line(f"  {job.id:<4} {state:<14} {int(job.running_s):>6} s  {command}")
        self.line("End one with /shells kill ID.")

    async def history(self, _arg: str) -> None:
        self.repl.renderer.history(self.repl.session.get_history())

    async def carry_on(self, _arg: str) -> None:
        if self.repl.session.can_continue:
            await self.repl.turn(None)
        else:
            self.line("nothing to continue: the last turn finished", style="dim")

    async def cost(self, _arg: str) -> None:
        from loom.cli.repl.status import usage_in_text
        from loom.session import session_cost

        usage = self.repl.session.usage
        known = session_cost(self.repl.session)
        cost = "unknown (no price known for a model used)" if known is None else f"${known:.4f}"
        thinking = usage.reasoning_tokens
        thought = f" ({thinking:,} of them thinking)" if thinking else ""
        self.line(
            f"This session: {usage_in_text(usage)}, {usage.output_tokens:,} out"
            f"{thought}; cost {cost} ({self.repl.session.model})"
        )

    async def context(self, _arg: str) -> None:
        view = await self.repl.session.context_view()
        self.line(f"Context window of {_printable(view.model)}: {view.window:,} tokens")
        for part in view.parts:
            if part.tokens or part.key in ("messages", "free"):
                share = 100 * view.share(part)
                self.line(f"  {_printable(part.label):<34} {part.tokens:>9,}  {share:5.1f}%")
        if view.suggestion:
            self.line(f"Suggestion: {_printable(view.suggestion)}", style="yellow")

    async def diff(self, _arg: str) -> None:
        from loom.cli.approve import styled_body
        from loom.session import changes_since_start

        thread = self.repl.session.thread
        start = getattr(thread, "git_initial_commit_sha", None)
        if not start:
            self.line("no starting commit recorded for this thread (not a git repository?)")
            return
        found = await asyncio.to_thread(changes_since_start, self.root, thread, MAX_NEW_FILES)
        if found.problem is not None:
            self.line(f"cannot show the changes: {found.problem}", style="red")
            return
        if not found.files:
            self.line(f"this thread changed nothing since {start[:10]} (its starting commit)")
            return
        self.line(f"this thread's changes since {start[:10]} (its starting commit):", style="bold")
        text = "".join(change.text for change in found.files)
        if len(text.splitlines()) > DIFF_PAGE_LINES and self.repl.interactive:
            import pydoc

            from loom.core.text import visible_block  # (the pager may pass escapes on)

            await asyncio.to_thread(pydoc.pager, visible_block(text))
        else:
            self.repl.renderer.text(styled_body(text, "diff"))

    async def clear(self, _arg: str) -> None:
        old = self.repl.session.thread.id
        if await self.repl.new_thread():
            self.line(f"New thread. The previous one is kept: loom resume {old}", style="dim")

    async def init(self, _arg: str) -> None:
        from loom.cli.repl.init_file import INSTRUCTIONS_FILE, write_agents_md

        target = self.root / INSTRUCTIONS_FILE
        if target.exists() or target.is_symlink():
            self.line(f"{target} exists already; edit it, or delete it and run /init again.")
            return
        text = await asyncio.to_thread(write_agents_md, self.root)
        self.line(f"Wrote {target} ({len(text.splitlines())} lines): review and edit it.")

    async def permissions(self, arg: str) -> None:
        from loom.session import LoomError

        grants = self.repl.workspace.grants
        words = arg.split()
        try:
            if words[:1] == ["revoke"] and len(words) == 2:
                grant = grants.revoke(words[1])
                self.line(f"revoked grant {grant.id}: {grant.tool} {grant.describe()}")
                return
            if arg:
                self.line("use /permissions, or /permissions revoke ID", style="yellow")
                return
            found = grants.list(self.root)
        except LoomError as exc:
            self.line(f"error: {exc}", style="yellow")
            return
        if not found:
            self.line("No 'allow always' grants in this project; [a] at a question makes one.")
            return
        for grant in found:
            self.line(f"  {grant.id:>4}  {grant.tool:<12} {grant.describe()}")
        self.line("Revoke one with /permissions revoke ID (or `loom permissions revoke ID`).")

    async def mcp(self, arg: str) -> None:
        """The session's MCP servers; `/mcp approve NAME` trusts one the project defines
        (.mcp.json) and starts it now, its tools joining from the next model call on."""
        from loom.session import LoomError

        workspace, session_id = self.repl.workspace, self.repl.session.id
        words = arg.split()
        if words[:1] == ["approve"] and len(words) == 2:
            try:
                ask = workspace.approve_mcp_server(session_id, words[1])
            except LoomError as exc:
                self.line(f"error: {exc}", style="yellow")
                return
            self.line(f"Approved {ask.name!r} for this project; starting: {ask.command}")
            for line in ask.details:
                self.line(f"    {line}", style="dim")
            return
        if arg:
            self.line("use /mcp, or /mcp approve NAME", style="yellow")
            return
        rows = workspace.mcp_servers(session_id)
        if not rows:
            self.line("No MCP servers in this session; `loom mcp add` configures one.")
            return
        from loom.config import visible  # a project's server names may hold anything

        for row in rows:
            tools = f"{row.tools} tools" if row.state == "ready" else ""
            self.line(f"  {visible(row.name):<14} {row.state:<15} {tools:<9} {row.detail}")
            if row.state == "needs approval":  # what approving it would let it do
                for line in row.details:
                    self.line(f"      {line}", style="dim")
        if any(row.state == "needs approval" for row in rows):
            self.line("Start one the project defines with /mcp approve NAME.")

    async def decisions(self, arg: str) -> None:
        """The decision graph, as `loom decisions` shows it: newest goals and decisions,
        `pulse` for its health, or one node with its links."""
        import asyncio

        from loom.session import LoomError

        api = self.repl.workspace.decisions
        try:
            if arg == "pulse":
                report = await asyncio.to_thread(api.pulse)
                for line in api.render_pulse(report).splitlines():
                    self.line(line)
                return
            if arg:
                view = await asyncio.to_thread(api.show, arg)
                node = view.node
                doubt = "  (uncertain)" if view.uncertain else ""
                self.line(f"{node.id} [{node.node_type}] {node.title}")
                self.line(f"  {node.status}, confidence {node.confidence}{doubt}")
                if node.description:
                    self.line(f"  {node.description}")
                for direction, edge, other in view.links:
                    arrow = "->" if direction == "child" else "<-"
                    title = other.title if other is not None else "(missing)"
                    self.line(f"  {arrow} {edge.edge_type} {title}")
                return
            rows = await asyncio.to_thread(api.list, types=["goal", "decision"], limit=20)
        except LoomError as exc:
            self.line(f"error: {exc}", style="yellow")
            return
        if not rows:
            self.line("No goals or decisions logged in this project yet.")
            return
        for row in rows:
            self.line(f"  {row.id}  {row.node_type:<8} {row.confidence:>3}  {row.title}")
        self.line("/decisions ID shows one; /decisions pulse the graph's health.")

    async def custom(self, name: str, arg: str) -> None:
        rel = custom_commands(self.root)[name]
        try:
            text = read_command(self.root, rel)
        except OSError as exc:
            self.line(f"{name} not run: {exc}", style="red")
            return
        prompt = expand_custom(text, arg).strip()
        if not prompt:
            self.line(f"{rel} is empty; write the prompt in it", style="yellow")
            return
        await self.repl.turn(prompt)


def _first_line(root: Path, rel: str) -> str:
    try:
        text = read_command(root, rel)
    except OSError as exc:
        return f"(not readable: {exc})"[:90]
    for line in text.splitlines():
        if line.strip():
            return line.strip().lstrip("# ")[:70]
    return "(custom command)"


def _printable(text: str) -> str:
    """A command the model wrote, on one line with no control characters (until the
    shared terminal sanitizer lands: branch sec-text)."""
    return "".join(ch if ch.isprintable() else " " for ch in text)
