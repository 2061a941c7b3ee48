"""A session's system prompts, put together from `loom.prompts`.

`SessionPrompts` reads the environment (one git status, off the event loop) and the
project's instruction files once per session, so the system text stays byte-identical
between calls (prompt caching), and hands out the agent's prompt for the active model's
family and the architect's planning prompt. `nested` adds the instruction files of
folders the agent reaches later (see `loom.prompts.instructions`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.llm.registry import parse_model_name
from loom.prompts import (
    Environment,
    NestedInstructions,
    ProjectInstructions,
    architect_prompt,
    build_system_prompt,
    detect_environment,
    environment_news,
    family_of,
    load_instructions,
)
from loom.providers import declaration

if TYPE_CHECKING:
    from loom.session.runtime.options import SessionOptions

EDITOR_STEP_PROMPT = """\
Architect plan step {index} of {total}: [{action}] {file}
{description}

Carry out only this step with the file tools, then reply with one short sentence saying
what you did (or why you could not)."""


class SessionPrompts:
    def __init__(
        self,
        project_root: Path,
        options: SessionOptions,
        history: Callable[[], Sequence[Any]] = list,
    ) -> None:
        self.project_root = project_root
        self.options = options
        self._history = history  # the thread's messages: a resumed one's nested files
        self._environment: Environment | None = None
        self._instructions: ProjectInstructions | None = options.instructions
        self._nested: NestedInstructions | None = None
        self._instructions_text: str | None = None
        self.hook_context = ""  # what SessionStart hooks printed, for the system prompt
        self._files_changed = False  # a tool that may edit ran since git was last read
        self._news = ""  # how the environment differs from the prompt's snapshot

    @property
    def instructions(self) -> ProjectInstructions:
        """The instruction files read at start (read now if nobody gave them)."""
        if self._instructions is None:
            self._instructions = load_instructions(self.project_root)
        return self._instructions

    def instructions_text(self) -> str:
        """The instructions zone, fitted to `[context] rules_max_tokens` (made once)."""
        if self._instructions_text is None:
            if self.options.rules is not None:  # given as text (tests, embedders)
                from loom.prompts.instructions import fit_tokens

                rules = self.options.rules.strip()
                text = fit_tokens(rules, self.options.rules_max_tokens) if rules else ""
            else:
                text = self.instructions.render(self.options.rules_max_tokens)
            self._instructions_text = text
        return self._instructions_text

    async def instructions_text_soon(self) -> str:
        """`instructions_text`, read off the event loop the first time only."""
        if self._instructions_text is not None:
            return self._instructions_text
        return await asyncio.to_thread(self.instructions_text)

    @property
    def nested(self) -> NestedInstructions:
        if self._nested is None:
            from loom.llm.tokens import estimate_tokens

            text = self.instructions_text()
            nested = NestedInstructions(
                self.project_root,
                self.options.cwd,
                self.options.rules_max_tokens,
                estimate_tokens(text) if text else 0,
            )
            nested.remember(m.content for m in self._history() if m.role == "tool")
            self._nested = nested
        return self._nested

    async def environment(self) -> Environment:
        if self._environment is None:
            sandbox, network = self.options.sandbox_summary
            self._environment = await asyncio.to_thread(
                detect_environment,
                self.project_root,
                self.options.cwd,
                sandbox=sandbox,
                network=network,
            )
        return self._environment

    def share_environment(self, parent: SessionPrompts) -> None:
        """Start from `parent`'s environment snapshot (a sub-agent in its parent's
        folders): the system text is then the parent's, byte for byte, and the parent's
        cached prefix serves it; what changed since that snapshot is news for the first
        call (`news`)."""
        same = (parent.project_root, parent.options.cwd) == (self.project_root, self.options.cwd)
        if same and parent._environment is not None:
            self._environment = parent._environment
            self._files_changed = True

    def files_may_have_changed(self) -> None:
        """A tool that may edit files ran: the git state is read again before the next
        call (`news`)."""
        self._files_changed = True

    async def news(self) -> str:
        """What changed since the environment snapshot in the system prompt (the git
        state after edits, a new day), for the call's context block: the prompt itself
        stays as it was, so the providers' caches keep serving it."""
        if self._environment is None:
            return ""
        snapshot = self._environment
        if self._files_changed:
            self._files_changed = False
            sandbox, network = self.options.sandbox_summary
            now = await asyncio.to_thread(
                detect_environment,
                self.project_root,
                self.options.cwd,
                sandbox=sandbox,
                network=network,
            )
            self._news = environment_news(snapshot, now)
        import datetime as dt

        today = dt.date.today().isoformat()
        if today != snapshot.date:
            return f"{self._news}\n- Today's date is now {today}.".strip()
        return self._news

    async def agent(self, model: str) -> str:
        """The agent's system prompt for `model` ("provider:model-id")."""
        if self.options.system_prompt:
            return self.options.system_prompt
        provider, model_id = parse_model_name(model)
        extra = self.options.extra_system
        if self.hook_context:
            extra = f"{extra}\n\n# From the SessionStart hooks\n\n{self.hook_context}".strip()
        decl = declaration(provider)
        if self.options.text_tool_calls and decl is not None and decl.text_tool_calls:
            from loom.llm.text_tool_calls import FORMAT_NOTE

            extra = f"{extra}\n\n{FORMAT_NOTE}".strip()
        return build_system_prompt(
            family_of(provider, model_id),
            await self.environment(),
            await self.instructions_text_soon(),
            extra,
            base=self.options.system_base,
        )

    async def architect(self) -> str:
        text = await self.instructions_text_soon()
        from loom.core.plan import PLAN_FORMAT  # architect mode only

        return architect_prompt(await self.environment(), text, PLAN_FORMAT)

    def nested_for(self, tool: Any, args: dict[str, Any]) -> str:
        """Instructions of folders a path tool call reached for the first time, to add to
        its result; "" for other tools and folders already seen."""
        subject = self._nested_subject(tool, args)
        if subject is None:
            return ""
        is_folder = (self.project_root / subject).is_dir()
        return self.nested.for_path(subject, is_folder)

    def nested_may_apply(self, tool: Any, args: dict[str, Any]) -> bool:
        """Whether `nested_for` could add anything (decided without I/O, on the event
        loop): a path tool reaching a folder not seen yet. Most calls are not, and
        need no trip to a worker thread."""
        subject = self._nested_subject(tool, args)
        return subject is not None and (self._nested is None or self._nested.unseen(subject))

    def _nested_subject(self, tool: Any, args: dict[str, Any]) -> str | None:
        from loom.tools.base import Tool, subject_kind_of

        if subject_kind_of(tool) != "path" or self.options.rules is not None:
            return None
        subject = tool.permission_subject(args) if isinstance(tool, Tool) else None
        if not isinstance(subject, str) or subject.startswith(("/", "..")) or subject == ".":
            return None
        return subject
