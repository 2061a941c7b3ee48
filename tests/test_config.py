"""Layered configuration: every layer, its precedence, and every kind of bad input."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from loom.config import ConfigError, find_project, load_config, load_project_rules
from loom.paths import LoomPaths


@pytest.fixture
def paths() -> LoomPaths:
    return LoomPaths.from_env()  # LOOM_HOME per test (tests/conftest.py)


def write_user(paths: LoomPaths, text: str) -> Path:
    paths.user_config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file.write_text(text)
    return paths.user_config_file


def test_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path, environ={})
    assert config.model.default == "anthropic:claude-sonnet-4-6"
    assert config.model.architect is None  # the provider of the model in use decides
    assert config.repo.watch_enabled is True
    assert config.repo.map_tokens == 1024
    assert config.project_root == tmp_path.resolve()
    assert config.sources == []
    assert config.warnings == []


def test_precedence_user_project_env_flags(tmp_path: Path, paths: LoomPaths) -> None:
    write_user(
        paths,
        '[model]\ndefault = "openai:gpt-user"\narchitect = "openai:arch-user"\n'
        "[shell]\ntimeout = 10\n[repo]\nmap_tokens = 10\n",
    )
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / ".loom.toml").write_text(
        '[model]\narchitect = "google:arch-proj"\n[shell]\ntimeout = 20\n'
    )
    env = {"LOOM_SHELL_TIMEOUT": "30", "LOOM_MAP_TOKENS": "99"}
    config = load_config(project / "src", {"repo.map_tokens": 7}, environ=env)
    assert config.model.default == "openai:gpt-user"  # user file only
    assert config.model.architect == "google:arch-proj"  # project beats user
    assert config.shell.timeout == 30  # environment beats project
    assert config.repo.map_tokens == 7  # flags beat environment
    assert config.project_root == project.resolve()
    assert config.sources == [paths.user_config_file, project.resolve() / ".loom.toml"]


def test_unset_flags_override_nothing(tmp_path: Path) -> None:
    config = load_config(tmp_path, {"model": {"default": None}}, environ={"LOOM_MODEL": "a:b"})
    assert config.model.default == "a:b"


def test_provider_keys_from_environment_and_file(tmp_path: Path, paths: LoomPaths) -> None:
    write_user(
        paths,
        '[providers.openai-compatible]\nbase_url = "http://127.0.0.1:9/v1"\n'
        '[providers.anthropic]\napi_key = "from-file"\n',
    )
    config = load_config(tmp_path, environ={"ANTHROPIC_API_KEY": "from-env"})
    assert config.providers.for_provider("anthropic").api_key == "from-env"
    assert config.providers.for_provider("openai-compatible").base_url == "http://127.0.0.1:9/v1"
    assert config.providers.for_provider("nope").api_key is None


def test_a_plugin_provider_s_table_is_kept_a_built_in_s_stays_checked(
    tmp_path: Path, paths: LoomPaths
) -> None:
    write_user(
        paths,
        '[providers.myplugin]\nbase_url = "http://127.0.0.1:9"\nregion = "eu"\n'
        '[providers.anthropic]\nregion = "eu"\n',
    )
    config = load_config(tmp_path, environ={})
    mine = config.providers.for_provider("myplugin")
    assert mine.base_url == "http://127.0.0.1:9" and mine.api_key is None
    assert config.providers.plugins()["myplugin"].options == {"region": "eu"}
    [warning] = config.warnings  # a built-in provider's table still names its keys
    assert "unknown config key 'providers.anthropic.region'" in warning
    write_user(paths, "[providers]\nmyplugin = 3\n")
    with pytest.raises(ConfigError, match=r"'providers\.myplugin' must be a table, not the num"):
        load_config(tmp_path, environ={})


def test_deny_rules_add_up_across_layers(tmp_path: Path, paths: LoomPaths) -> None:
    write_user(paths, '[permissions]\ndeny = ["shell:rm *"]\nauto_approve = ["shell"]\n')
    (tmp_path / ".loom.toml").write_text(
        '[permissions]\ndeny = ["file_write:.env"]\nauto_approve = ["file_read"]\n'
    )
    config = load_config(tmp_path, environ={}, trust=True)
    assert config.permissions.deny == ["shell:rm *", "file_write:.env"]
    assert config.permissions.auto_approve == ["file_read"]  # ordinary lists replace


def test_auto_approve_from_environment(tmp_path: Path) -> None:
    config = load_config(tmp_path, environ={"LOOM_AUTO_APPROVE": "file_read, shell ,"})
    assert config.permissions.auto_approve == ["file_read", "shell"]


def test_unknown_keys_are_warnings_naming_file_line_and_valid_keys(
    tmp_path: Path, paths: LoomPaths
) -> None:
    path = write_user(paths, '[model]\ndefault = "a:b"\ndefualt = "x"\n[colour]\nx = 1\n')
    config = load_config(tmp_path, environ={})
    assert config.model.default == "a:b"
    first, second = config.warnings
    assert f"{path}:3" in first and "'model.defualt'" in first
    assert "architect, cache_ttl, default, editor, effort, max_retries" in first
    assert "'colour'" in second and "model" in second and "repo" in second


def test_bad_toml_names_file_and_line(tmp_path: Path, paths: LoomPaths) -> None:
    path = write_user(paths, '[model]\ndefault = "unterminated\n')
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, environ={})
    message = str(info.value)
    assert str(path) in message and "line 2" in message and "invalid TOML" in message


def test_wrong_type_names_file_line_key_and_value(tmp_path: Path) -> None:
    (tmp_path / ".loom.toml").write_text('[repo]\nwatch_enabled = true\nmap_tokens = "lots"\n')
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, environ={})
    message = str(info.value)
    assert f"{tmp_path.resolve() / '.loom.toml'}:3" in message
    assert "repo.map_tokens" in message and "'lots'" in message and "fix the value" in message


def test_wrong_type_in_environment_names_the_layer(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"environment.*shell\.timeout"):
        load_config(tmp_path, environ={"LOOM_SHELL_TIMEOUT": "soon"})


def test_project_root_is_git_root_and_search_stops_there(tmp_path: Path) -> None:
    (tmp_path / ".loom.toml").write_text('[model]\ndefault = "outside:repo"\n')
    repo = tmp_path / "repo"
    (repo / "a" / "b").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    root, config_file = find_project(repo / "a" / "b")
    assert root == repo and config_file is None
    assert load_config(repo / "a" / "b", environ={}).model.default.startswith("anthropic:")


def test_project_root_without_git_is_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / ".loom.toml").write_text("")
    (tmp_path / "sub").mkdir()
    assert find_project(tmp_path / "sub") == (tmp_path, tmp_path / ".loom.toml")


def test_project_rules(tmp_path: Path) -> None:
    assert load_project_rules(tmp_path) == ""
    (tmp_path / "LOOM.md").write_text("Use tabs.\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "LOOM.md").write_text("Tests live in pkg/tests.")
    assert load_project_rules(tmp_path) == "Use tabs."
    assert load_project_rules(tmp_path, tmp_path / "pkg") == "Use tabs.\n\nTests live in pkg/tests."


def test_huge_rules_file_is_truncated(tmp_path: Path) -> None:
    (tmp_path / "LOOM.md").write_text("x" * 100_000)
    text = load_project_rules(tmp_path)
    assert len(text) < 70_000 and text.endswith("truncated at 64000 bytes]")


def test_config_import_is_light() -> None:
    code = (
        "import sys, loom.config; print(sorted(m for m in ('anthropic','openai','typer','rich',"
        "'fastapi','google.genai') if m in sys.modules))"
    )
    out = subprocess.run(
        [".venv/bin/python", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[1],
    )
    assert out.stdout.strip() == "[]"


def test_loom_config_shows_layers_and_hides_keys(
    tmp_path: Path,
    paths: LoomPaths,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json
    import tomllib

    from loom.__main__ import main

    write_user(paths, '[providers.openai]\napi_key = "sk-very-secret"\n')
    (tmp_path / ".loom.toml").write_text('[model]\ndefault = "openai:gpt-5"\n[bogus]\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOOM_SHELL_TIMEOUT", "30")
    with pytest.raises(SystemExit) as done:
        main(["config"])
    assert done.value.code in (0, None)
    out, err = capsys.readouterr()
    assert "sk-very-secret" not in out
    shown = tomllib.loads(out)  # the output is valid TOML
    assert shown["model"]["default"] == "openai:gpt-5"
    assert shown["shell"]["timeout"] == 30
    assert shown["providers"]["openai"]["api_key"] == "<set>"
    assert "# environment:  LOOM_SHELL_TIMEOUT" in out
    assert ".loom.toml:3: unknown config key 'bogus'" in err
    with pytest.raises(SystemExit):
        main(["config", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["sources"]["loaded"] == [
        str(paths.user_config_file),
        str(tmp_path.resolve() / ".loom.toml"),
    ]


def test_loom_config_reports_a_broken_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from loom.__main__ import main

    (tmp_path / ".loom.toml").write_text("[model\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(["config"])
    assert done.value.code == 1
    assert "invalid TOML" in capsys.readouterr().err


def test_any_lifecycle_hook_is_told_apart_from_post_tools_commands() -> None:
    # session assembly imports loom.hooks only when this is true (tests/cli/test_run_startup.py)
    from loom.config import HooksSection

    assert not HooksSection().any_lifecycle()
    assert not HooksSection(post_tools=["make fmt"]).any_lifecycle()
    assert HooksSection.model_validate({"Stop": [{"command": "true"}]}).any_lifecycle()
