"""Where servers come from (config files, .mcp.json, a session) and `loom mcp
add|remove|list|approve`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from loom.cli.app import build_app
from loom.config import load_config
from loom.mcp_client import ApprovalStore, load_server_specs, session_specs
from loom.paths import LoomPaths
from tests.support.mcp import BAD_SERVER


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def test_mcp_json_entries_and_env_expansion(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GH_TOKEN", "abc")
    (proj / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "gh": {"url": "https://example.test/mcp", "headers": {"X": "${GH_TOKEN}"}},
                    "fs": {"command": "npx", "args": ["-y", "srv", "${MISSING:-.}"]},
                    "bad": {"args": ["x"]},
                }
            }
        )
    )
    specs = {spec.name: spec for spec in load_server_specs(load_config(proj))}
    assert specs["gh"].headers == {"X": "abc"} and specs["gh"].transport == "http"
    assert specs["fs"].args == ("-y", "srv", ".") and specs["fs"].needs_approval
    assert specs["bad"].problem is not None
    assert "neither command nor url" in specs["bad"].problem


def test_broken_mcp_json_is_one_problem(proj: Path) -> None:
    (proj / ".mcp.json").write_text("{not json")
    (spec,) = load_server_specs(load_config(proj))
    assert spec.problem is not None
    assert "cannot read it" in spec.problem and "fix the JSON" in spec.problem


def test_config_toml_wins_and_project_file_servers_need_approval(proj: Path) -> None:
    (proj / ".mcp.json").write_text(json.dumps({"mcpServers": {"x": {"command": "from-json"}}}))
    (proj / ".loom.toml").write_text('[mcp.servers.p]\ncommand = "proj-cmd"\n')
    user = LoomPaths.from_env().user_config_file
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('[mcp.servers.x]\ncommand = "user-cmd"\n')
    specs = {spec.name: spec for spec in load_server_specs(load_config(proj))}
    assert specs["x"].command == "user-cmd" and not specs["x"].needs_approval
    assert specs["p"].needs_approval and specs["p"].source.endswith(".loom.toml")


def test_approval_is_bound_to_the_definition(proj: Path) -> None:
    (proj / ".mcp.json").write_text(json.dumps({"mcpServers": {"s": {"command": "one"}}}))
    (spec,) = load_server_specs(load_config(proj))
    approvals = ApprovalStore(LoomPaths.from_env().database, proj)
    assert not approvals.is_approved(spec)
    approvals.approve(spec)
    assert approvals.is_approved(spec)
    (proj / ".mcp.json").write_text(json.dumps({"mcpServers": {"s": {"command": "two"}}}))
    (changed,) = load_server_specs(load_config(proj))
    assert not approvals.is_approved(changed)


def test_session_servers_in_acp_shape() -> None:
    (spec,) = session_specs(
        [{"name": "a", "command": "srv", "args": [], "env": [{"name": "K", "value": "v"}]}]
    )
    assert spec.env == {"K": "v"} and spec.origin == "session" and not spec.needs_approval


def test_malformed_session_servers_are_problems_not_crashes() -> None:
    specs = session_specs([{"name": "a", "args": 5, "command": "x"}, "garbage", {"name": "b"}])
    assert [spec.name for spec in specs] == ["a", "#2", "b"]
    assert all(spec.problem for spec in specs)
    assert specs[0].problem is not None and specs[2].problem is not None
    assert "malformed" in specs[0].problem and "neither command nor url" in specs[2].problem


def test_cli_add_list_remove(proj: Path) -> None:
    runner = CliRunner()
    app = build_app()
    added = runner.invoke(
        app, ["mcp", "add", "bad", "--env", "A=1", "--", sys.executable, str(BAD_SERVER)]
    )
    assert added.exit_code == 0, added.output
    user = LoomPaths.from_env().user_config_file
    assert "[mcp.servers.bad]" in user.read_text()
    listed = runner.invoke(app, ["mcp", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    (row,) = json.loads(listed.stdout)
    assert row["name"] == "bad" and row["state"] == "ready" and row["tools"] == 5
    assert row["tokens"] > 0
    twice = runner.invoke(app, ["mcp", "add", "bad", "--url", "http://127.0.0.1:1/mcp"])
    assert twice.exit_code == 2 and "already has" in twice.output
    removed = runner.invoke(app, ["mcp", "remove", "bad"])
    assert removed.exit_code == 0 and "[mcp.servers" not in user.read_text()
    again = runner.invoke(app, ["mcp", "remove", "bad"])
    assert again.exit_code == 1 and "has no" in again.output


def test_cli_add_to_the_project_is_approved_by_you(proj: Path) -> None:
    runner = CliRunner()
    added = runner.invoke(build_app(), ["mcp", "add", "p", "--project", "--", "srv", "-x"])
    assert added.exit_code == 0, added.output
    assert '[mcp.servers.p]\ncommand = "srv"\nargs = ["-x"]' in (proj / ".loom.toml").read_text()
    (spec,) = load_server_specs(load_config(proj))
    assert spec.needs_approval
    assert ApprovalStore(LoomPaths.from_env().database, proj).is_approved(spec)


def test_cli_add_needs_exactly_one_target(proj: Path) -> None:
    result = CliRunner().invoke(build_app(), ["mcp", "add", "x"])
    assert result.exit_code == 2 and "either a command" in result.output


def test_cli_approve(proj: Path) -> None:
    (proj / ".mcp.json").write_text(json.dumps({"mcpServers": {"s": {"command": "srv"}}}))
    runner = CliRunner()
    unknown = runner.invoke(build_app(), ["mcp", "approve", "nope"])
    assert unknown.exit_code == 1 and "no MCP server named 'nope'" in unknown.output
    unasked = runner.invoke(build_app(), ["mcp", "approve", "s"])  # no terminal, no --yes
    assert unasked.exit_code == 1 and "pass --yes" in unasked.output
    (spec,) = load_server_specs(load_config(proj))
    assert not ApprovalStore(LoomPaths.from_env().database, proj).is_approved(spec)
    done = runner.invoke(build_app(), ["mcp", "approve", "s", "--yes"])
    assert done.exit_code == 0 and "srv" in done.output
    (spec,) = load_server_specs(load_config(proj))
    assert ApprovalStore(LoomPaths.from_env().database, proj).is_approved(spec)


def test_loom_config_hides_server_headers_and_secret_env(proj: Path) -> None:
    user = LoomPaths.from_env().user_config_file
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(
        '[mcp.servers.gh]\nurl = "https://x.test/mcp"\n'
        'headers = { Authorization = "Bearer abcdefghijklmnop123" }\n'
        'env = { GITHUB_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz", REGION = "eu" }\n'
    )
    shown = CliRunner().invoke(build_app(), ["config"])
    assert shown.exit_code == 0, shown.output
    assert "abcdefghijklmnop123" not in shown.output and "ghp_abc" not in shown.output
    assert 'Authorization = "<set>"' in shown.output and 'REGION = "eu"' in shown.output


def test_a_trusted_mcp_json_changed_while_a_face_runs_needs_approval(proj: Path) -> None:
    (proj / ".mcp.json").write_text(json.dumps({"mcpServers": {"s": {"command": "one"}}}))
    load_config(proj).trust.trust()
    config = load_config(proj)  # a long-lived face (loom web, loom acp) read it once
    (spec,) = load_server_specs(config)
    assert spec.trusted and not spec.needs_approval
    changed = {"s": {"command": "two"}, "t": {"command": "new"}}
    (proj / ".mcp.json").write_text(json.dumps({"mcpServers": changed}))  # a pull, a plant
    specs = {spec.name: spec for spec in load_server_specs(config)}
    assert specs["s"].command == "two" and specs["s"].needs_approval
    assert specs["t"].needs_approval
    assert load_config(proj).trust.state == "changed"  # and the next start asks again


def test_your_own_mcp_add_to_a_trusted_project_keeps_it_trusted(proj: Path) -> None:
    (proj / ".loom.toml").write_text('[shell]\npass_env = ["GITHUB_TOKEN"]\n')
    load_config(proj).trust.trust()
    runner = CliRunner()
    added = runner.invoke(build_app(), ["mcp", "add", "p", "--project", "--", "srv"])
    assert added.exit_code == 0, added.output
    assert load_config(proj).trust.state == "trusted"
    removed = runner.invoke(build_app(), ["mcp", "remove", "p", "--project"])
    assert removed.exit_code == 0, removed.output
    assert load_config(proj).trust.state == "trusted"
    (proj / ".loom.toml").write_text('[shell]\npass_env = ["*"]\n')  # not by Loom: asks
    assert load_config(proj).trust.state == "changed"
