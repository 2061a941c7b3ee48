"""Agents a session can hand work to with the `task` tool.

Built in: `general` (the session's own prompt and tools; what `task` runs without an
`agent`) and `explore` (a read-only explorer). Custom agents are Markdown files:

    .loom/agents/NAME.md                  the project's (read confined to the project)
    $XDG_CONFIG_HOME/loom/agents/NAME.md  the person's own, for every project

    ---
    name: reviewer                        # lowercase letters, digits, - and _
    description: Reviews a diff for bugs  # how the model picks it: say when to use it
    tools: file_read, content_search      # optional: the child gets only these (globs ok)
    model: openai:gpt-5-mini              # optional: provider:model-id; default: the parent's
    effort: low                           # optional: minimal|low|medium|high; default: the parent's
    ---
    The child's system prompt.

A project's agent replaces the person's agent of the same name (and says so); a file
that cannot be used is skipped with a problem naming the file and what to fix.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from importlib import resources
from pathlib import Path

from loom.delegation._files import Place
from loom.delegation.frontmatter import FrontmatterError, list_field, split_frontmatter, text_field

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
GENERAL = "general"
# what the read-only explorer may use: tools that only read (present ones are given)
EXPLORE_TOOLS = (
    "file_read", "file_search", "content_search", "directory_list", "repo_map",
    "symbol_search", "lsp_definition", "lsp_references", "lsp_hover", "lsp_diagnostics",
    "decision_query",
)  # fmt: skip


@dataclass(frozen=True)
class AgentDefinition:
    name: str
    description: str
    prompt: str = ""  # the child's system text; "": the session's own prompt
    tools: tuple[str, ...] | None = None  # names or globs; None: the parent's tools
    model: str | None = None  # provider:model-id; None: the parent's model
    effort: str | None = None  # how hard a reasoning model thinks; None: the parent's
    source: str = "builtin"  # "builtin" | "project" | "user"
    label: str = "built in"  # where it is defined, for a person (faces add the brackets)
    strict_tools: bool = True  # an unknown name in `tools` is an error (custom agents)


@dataclass
class AgentCatalog:
    agents: dict[str, AgentDefinition] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def get(self, name: str) -> AgentDefinition | None:
        return self.agents.get(name)

    def names(self) -> list[str]:
        return list(self.agents)


def builtin_agents() -> list[AgentDefinition]:
    explore = resources.files("loom.delegation").joinpath("explore.md").read_text("utf-8").strip()
    return [
        AgentDefinition(
            GENERAL,
            "A general-purpose agent with your tools.",
        ),
        AgentDefinition(
            "explore",
            "A fast read-only explorer; say how thorough to be.",
            prompt=explore,
            tools=EXPLORE_TOOLS,
            strict_tools=False,
        ),
    ]


def agent_places(project_root: Path, config_dir: Path) -> list[Place]:
    """Where custom agents live: the person's first, then the project's (which wins)."""
    return [
        Place(config_dir, "agents", "user", "~/.config/loom/agents"),
        Place(project_root, ".loom/agents", "project", ".loom/agents"),
    ]


def discover_agents(project_root: Path, config_dir: Path) -> AgentCatalog:
    catalog = AgentCatalog({agent.name: agent for agent in builtin_agents()})
    for place in agent_places(project_root, config_dir):
        for entry in place.entries():
            if not entry.endswith(".md") or entry.startswith("."):
                continue
            try:
                agent = parse_agent(place, entry)
            except (FrontmatterError, OSError, ValueError) as exc:
                catalog.problems.append(f"{place.label}/{entry}: {exc}; skipped")
                continue
            earlier = catalog.agents.get(agent.name)
            if earlier is not None and earlier.source == "user" and agent.source == "project":
                catalog.problems.append(
                    f"{agent.label} replaces your own agent {agent.name!r} ({earlier.label}) "
                    "in this project; rename one of them to keep both"
                )
            catalog.agents[agent.name] = agent
    return catalog


def parse_agent(place: Place, entry: str) -> AgentDefinition:
    fields, body = split_frontmatter(place.read(entry))
    label = f"{place.label}/{entry}"
    name = text_field(fields, "name", 64) or entry[: -len(".md")]
    if not NAME_RE.match(name):
        raise ValueError(
            f"name {name!r} is not an agent name (lowercase letters, digits, '-' and '_', "
            "starting with a letter or digit)"
        )
    description = text_field(fields, "description")
    if not description:
        raise ValueError("no 'description:' (the model picks an agent by it)")
    if not body:
        raise ValueError("the body (the agent's system prompt, after the frontmatter) is empty")
    tools = list_field(fields, "tools")
    model = text_field(fields, "model", 200) or None
    if model in ("inherit", None):
        model = None
    elif ":" not in model:
        raise ValueError(
            f"model {model!r} is not provider:model-id (e.g. anthropic:claude-haiku-4-5)"
        )
    from loom.llm.effort import check_effort

    effort = check_effort(text_field(fields, "effort", 20) or None)  # ValueError names them
    return AgentDefinition(
        name=name,
        description=description,
        prompt=body,
        tools=tuple(tools) if tools is not None else None,
        model=model,
        effort=effort,
        source=place.source,
        label=label,
    )


def unknown_tools(agent: AgentDefinition, names: Collection[str]) -> list[str]:
    """The entries of a custom agent's `tools:` (names or globs) that match none of
    `names`; a built-in agent takes what there is."""
    if agent.tools is None or not agent.strict_tools:
        return []
    return [pattern for pattern in agent.tools if not any(fnmatchcase(n, pattern) for n in names)]


def tool_problems(catalog: AgentCatalog, names: Collection[str]) -> list[str]:
    """A line per custom agent whose `tools:` names a tool a session does not have (an
    MCP server's tools join later, so `mcp__` names are not judged here)."""
    problems = []
    for agent in catalog.agents.values():
        missing = [p for p in unknown_tools(agent, names) if not p.startswith("mcp__")]
        if missing:
            problems.append(
                f"{agent.label}: `tools:` names no tool of this session: {', '.join(missing)}; "
                f"the task tool refuses agent {agent.name!r} until you fix it"
            )
    return problems
