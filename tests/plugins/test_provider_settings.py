"""A provider plugin is configured under `[providers.NAME]` like a built-in one: its
`api_key`, `base_url` and its own keys reach its factory (tests/plugins/site: `parrot`
answers with what it was given), a key it does not take stops the start with the keys
it does take, and a project's values wait for trust like the built-ins' endpoints."""

from __future__ import annotations

from pathlib import Path

from loom.paths import LoomPaths
from tests.fakes.llm_server import FakeLlmServer
from tests.support.loom_cli import loom
from tests.support.plugins import with_plugins


def user_config(text: str) -> None:
    path = LoomPaths.from_env().user_config_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_plugin_s_table_reaches_its_factory(server: FakeLlmServer, project: Path) -> None:
    user_config(
        '[providers.parrot]\ngreeting = "ahoy"\nbase_url = "http://parrot.invalid/v1"\n'
        'api_key = "parrot-key-from-the-user"\n'
    )
    done = loom(["run", "-p", "hi", "-m", "parrot:any"], project, server, PYTHONPATH=with_plugins())
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ahoy from http://parrot.invalid/v1 with a key"
    assert "unknown config key" not in done.stderr


def test_a_key_the_plugin_does_not_take_is_named(server: FakeLlmServer, project: Path) -> None:
    user_config('[providers.parrot]\ngretting = "ahoy"\n')
    done = loom(["run", "-p", "hi", "-m", "parrot:any"], project, server, PYTHONPATH=with_plugins())
    assert done.returncode != 0
    assert (
        "[providers.parrot] sets 'gretting', which the provider plugin 'parrot' "
        "(loom-shout 0.1) does not take; it takes api_key, base_url, greeting"
    ) in done.stderr
    assert done.stdout == ""


def test_a_project_s_plugin_settings_wait_for_trust(server: FakeLlmServer, project: Path) -> None:
    user_config('[providers.parrot]\nbase_url = "http://mine.invalid"\n')
    (project / ".loom.toml").write_text(
        '[providers.parrot]\ngreeting = "from the repository"\nbase_url = "http://theirs.invalid"\n'
    )
    args = ["run", "-p", "hi", "-m", "parrot:any"]
    untrusted = loom(args, project, server, PYTHONPATH=with_plugins())
    assert untrusted.returncode == 0, untrusted.stderr
    assert untrusted.stdout.strip() == "hello from http://mine.invalid with no key"
    assert "providers.parrot.greeting" in untrusted.stderr  # named as held back
    trusted = loom([*args, "--trust"], project, server, PYTHONPATH=with_plugins())
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stdout.strip() == "from the repository from http://theirs.invalid with no key"
