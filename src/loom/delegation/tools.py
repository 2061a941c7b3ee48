"""The delegation family's tools for a session, through the tool extension hook like any
plugin: `task` (sub-agents; its description lists the agents; none at `[agents]
max_depth = 0`) and `skill` (only when there are skills). Agents and skills are read
once per session."""

from __future__ import annotations

from typing import Any

from loom.delegation.agents import discover_agents
from loom.delegation.skill_tool import SkillTool
from loom.delegation.skills import discover_skills
from loom.delegation.task_tool import TaskTool
from loom.tools.base import Tool, ToolSetup


def provide(setup: ToolSetup) -> list[Tool]:
    root, config_dir = setup.project_root, setup.paths.config
    tools: list[Any] = []
    limits = setup.config.agents
    if limits.max_depth > 0:  # 0: no session delegates, so no task tool to offer
        tools.append(TaskTool(discover_agents(root, config_dir), limits.max_parallel, root))
    skills = discover_skills(root, config_dir)
    if skills.skills:
        tools.append(SkillTool(skills, root))
    return tools
