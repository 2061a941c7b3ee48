"""Delegation: agents a session hands work to (`task`), and skills it loads (`skill`).

    agents = discover_agents(project_root, paths.config)   # built-ins + .loom/agents + yours
    skills = discover_skills(project_root, paths.config)   # .loom/.claude/.agents skills + yours
    agents.problems, skills.problems                       # files skipped, and why

The tools reach sessions through the tool extension hook (`tools.provide`); running a
child session is loom.session's work (the `task` tool calls the `SubagentRunner` the
session puts in its tool context).
"""

from loom.delegation.agents import (
    GENERAL,
    AgentCatalog,
    AgentDefinition,
    builtin_agents,
    discover_agents,
)
from loom.delegation.skills import SkillCatalog, SkillDefinition, discover_skills
from loom.delegation.task_tool import (
    SubagentRunner,
    TaskOutcome,
    TaskRequest,
    TaskTool,
)

__all__ = [
    "GENERAL",
    "AgentCatalog",
    "AgentDefinition",
    "SkillCatalog",
    "SkillDefinition",
    "SubagentRunner",
    "TaskOutcome",
    "TaskRequest",
    "TaskTool",
    "builtin_agents",
    "discover_agents",
    "discover_skills",
]
