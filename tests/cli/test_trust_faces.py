"""Issue 19's remaining face rules: a project's agent files are read confined, `loom web`
will not serve a home folder it cannot ask about, what counts as "not a project", and the
MCP approval the web page and an editor show carries everything the server gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.fakes.llm_server import FakeLlmServer, Turn
from tests.support.loom_cli import loom

from loom.config import load_config
from loom.mcp_client import load_server_specs
from loom.project_files import not_a_project
from loom.session import McpServerAsk
from loom.web.views import fragment


def test_an_agent_file_symlinked_out_of_the_project_is_not_read(
    server: FakeLlmServer, project: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "outside" / "spy.md"
    secret.parent.mkdir()
    secret.write_text("---\nname: spy\ndescription: d\n---\nmarker-secret-prompt\n")
    agents = project / ".loom" / "agents"
    agents.mkdir(parents=True)
    (agents / "spy.md").symlink_to(secret)
    server.add(Turn(text="ok"))
    done = loom(["run", "-p", "hi"], project, server)
    assert done.returncode == 0, done.stderr
    assert ".loom/agents/spy.md leads outside the project (a symlink); not read" in done.stderr
    sent = json.dumps(server.requests[0].json)
    assert "marker-secret-prompt" not in sent and "- spy:" not in sent


def test_loom_web_will_not_serve_a_home_folder_without_asking(
    server: FakeLlmServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = loom(["web", "--no-open", "--port", "0"], home, server, HOME=str(home))
    assert done.returncode == 2, done.stderr  # no terminal to ask on: not served
    assert "is your home folder, not a project folder" in done.stderr
    assert "not started: run `loom web` in a project folder" in done.stderr


def test_home_root_and_what_holds_home_are_not_projects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "people" / "ana"
    (home / "code" / "proj").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    assert "is your home folder" in (not_a_project(home) or "")
    assert "holds your home folder" in (not_a_project(tmp_path / "people") or "")
    assert "root of the file system" in (not_a_project(Path("/")) or "")
    link = tmp_path / "shortcut"
    link.symlink_to(home)  # reached through a link: still the home folder
    assert "is your home folder" in (not_a_project(link) or "")
    assert not_a_project(home / "code" / "proj") is None


def test_the_mcp_approval_in_the_page_and_the_editor_shows_env_and_headers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-ant-person-key-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)  # what `${ANTHROPIC_API_KEY}` expands to
    project = tmp_path / "clone"
    (project / ".git").mkdir(parents=True)
    servers = {
        "local": {"command": "python3", "args": ["-m", "srv"], "cwd": "tools",
                  "env": {"PYTHONPATH": ".", "API_TOKEN": "tok-abcdefgh12345678"}},
        "remote": {"url": "https://mcp.example.test/mcp",
                   "headers": {"Authorization": "Bearer ${ANTHROPIC_API_KEY}",
                               "X-Team": "blue"}},
    }  # fmt: skip
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    specs = load_server_specs(load_config(project, environ={}))
    asks = {spec.name: McpServerAsk.of(spec) for spec in specs if spec.needs_approval}
    local, remote = asks["local"].details, asks["remote"].details
    # the editor's request_permission text is these lines joined (acp/live.py)
    assert "runs: python3 -m srv" in local and "in folder: tools" in local
    assert "env PYTHONPATH=." in local and "env API_TOKEN=<hidden>" in local
    assert "url: https://mcp.example.test/mcp" in remote
    assert (
        "header Authorization: <hidden> (includes your environment variable ANTHROPIC_API_KEY)"
        in remote
    )
    assert "header X-Team: <hidden>" in remote  # header values are always masked
    html = str(fragment("mcp_asks", list(asks.values())))  # the web page's banner
    assert "env API_TOKEN=&lt;hidden&gt;" in html and "env PYTHONPATH=." in html
    assert "header Authorization: &lt;hidden&gt; (includes your environment variable " in html
    assert "tok-abcdefgh12345678" not in html + "\n".join(local)
    assert key not in html + "\n".join(remote)  # named, never shown
    assert asks["remote"].name == "remote" and specs[1].headers["Authorization"].endswith(key)


def test_the_repl_without_a_terminal_refuses_a_home_folder(
    server: FakeLlmServer, tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    server.add(Turn(text="wrote to your home"))
    done = loom([], home, server, stdin="go\n", HOME=str(home))  # piped: nobody to ask
    assert done.returncode == 2, done.stderr
    assert "is your home folder, not a project folder" in done.stderr
    assert "--project-root" in done.stderr and not server.requests
    done = loom([], project, server, stdin="go\n")  # a project folder: as before
    assert done.returncode == 0 and "wrote to your home" in done.stdout, done.stderr


def test_loom_mcp_list_shows_a_server_name_as_written(server: FakeLlmServer, project: Path) -> None:
    servers = {"ok\rEVIL": {"command": "true"}}  # a carriage return would let it retype
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    listed = loom(["mcp", "list"], project, server)
    assert listed.returncode == 0, listed.stderr
    # (text mode reads a bare \r as a line end: the raw name would start a line "EVIL")
    assert listed.stdout.startswith("ok\\rEVIL  invalid"), listed.stdout
