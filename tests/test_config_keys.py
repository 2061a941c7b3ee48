"""Every configuration key declares what a project's file may do with it
(loom.config_keys.KEYS): adding a key without declaring it fails here."""

from __future__ import annotations

from typing import Any

from loom.config_keys import KEYS, Powerful, Tighten, _match, declared, drop_loosening
from tests.support.config_files import config_keys


def test_every_config_key_is_declared() -> None:
    undeclared = [".".join(path) for path in config_keys() if declared(path) is None]
    assert not undeclared, (
        "declare these keys in loom.config_keys.KEYS (SHAPES, Powerful(show) or "
        f"Tighten(rule, hint)); see its docstring: {undeclared}"
    )


def test_every_declaration_names_a_key_that_exists() -> None:
    keys = config_keys()
    stale = [
        pattern
        for pattern in KEYS
        if not any(_match(pattern, path[: len(pattern.split("."))]) for path in keys)
    ]
    assert not stale, f"KEYS declares keys the config model does not have: {stale}"


def test_the_issue_s_powerful_keys_are_declared_powerful() -> None:
    for dotted in (
        "lsp.servers.python",
        "mcp.servers.x",
        "hooks.post_tools",
        "hooks.PreToolUse",  # hooks another engineer adds are powerful without a change here
        "providers.anthropic.base_url",
        "providers.openai-compatible.api_key",
        "providers.myplugin.base_url",  # a provider plugin's table: same rules
        "providers.myplugin.region",  # and its own keys, which only the plugin understands
        "sync.server_url",
        "permissions.auto_approve",
        "shell.pass_env",
        "git.auto_commit",
        "web_fetch.allow_hosts",
    ):
        found = declared(tuple(dotted.split(".")))
        assert found is not None and isinstance(found[1], Powerful), dotted
    for dotted in ("sandbox.mode", "sandbox.network", "sandbox.writable"):
        found = declared(tuple(dotted.split(".")))
        assert found is not None and isinstance(found[1], Tighten), dotted


def test_a_project_cannot_loosen_the_sandbox_but_can_tighten_it() -> None:
    person: dict[tuple[str, ...], Any] = {("sandbox", "mode"): "off", ("sandbox", "network"): True,
              ("sandbox", "writable"): ["/srv", "/data"]}  # fmt: skip

    def lookup(path: tuple[str, ...]) -> Any:
        return person.get(path)

    tighter: dict[str, Any] = {"sandbox": {"mode": "ask", "network": False, "writable": ["/srv"]}}
    assert drop_loosening(tighter, lookup) == []
    assert tighter["sandbox"] == {"mode": "ask", "network": False, "writable": ["/srv"]}
    person[("sandbox", "mode")] = "on"
    person[("sandbox", "network")] = False
    looser: dict[str, Any] = {"sandbox": {"mode": "off", "network": True, "writable": ["/x"]}}
    dropped = drop_loosening(looser, lookup)
    assert {loose.path[-1] for loose in dropped} == {"mode", "network", "writable"}
    assert looser == {"sandbox": {}}


def test_the_most_specific_declaration_wins() -> None:
    """`providers.*.*` (a plugin's own keys) does not swallow the named ones."""
    found = declared(("providers", "openai-compatible", "text_tool_calls"))
    assert found == ("providers.*.text_tool_calls", KEYS["providers.*.text_tool_calls"])
    found = declared(("providers", "myplugin", "api_key"))
    assert found is not None and found[0] == "providers.*.api_key"
