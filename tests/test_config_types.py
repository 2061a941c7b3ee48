"""A config file's values are read as written (issue 34, item 3): `network = "true"`
is a string where a boolean belongs, an error naming the file, the line, the key and the
type it takes, never quietly converted; so a tighten-only key compares typed values and
a quoted one cannot loosen the sandbox, the sub-agent limits or undo."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pytest

from loom.config import ConfigError, LoomConfig, load_config
from loom.config_keys import KEYS, Tighten, declared
from loom.paths import LoomPaths
from tests.support.config_files import config_keys

# every tighten-only key, each with values that loosen it when read loosely
LOOSENING_BY_TYPE = {
    "sandbox.mode": ['"OFF"', '"Off "', "0", "false"],
    "sandbox.network": ['"true"', "1", '"yes"', '"on"'],
    "sandbox.writable": ['"/"', '"~"'],
    "sandbox.max_processes": ['"99999"', "true"],
    "sandbox.max_memory_mb": ['"999999"', "999999.0"],
    "sandbox.max_file_mb": ['"99999"', '"1e9"'],
    "agents.max_parallel": ['"64"', "64.0"],
    "agents.max_depth": ['"9"', "true"],
    "checkpoints.enabled": ['"false"', "0", '"off"', '"no"'],
}
EXPECTED = {
    "sandbox.mode": "input should be 'on', 'ask' or 'off'",
    "sandbox.network": "must be a boolean (true or false, without quotes)",
    "sandbox.writable": "must be a list ([...])",
    "checkpoints.enabled": "must be a boolean (true or false, without quotes)",
}


def test_every_tighten_only_key_is_tried() -> None:
    tighten = {key for key, kind in KEYS.items() if isinstance(kind, Tighten)}
    assert tighten == set(LOOSENING_BY_TYPE)


def toml_line(path: tuple[str, ...], value: str) -> str:
    """`path = value` on line 2 of a TOML file (a table header or a comment before it)."""
    if len(path) == 1:  # a top-level key such as `models`
        return f"# {path[0]}\n{path[0]} = {value}\n"
    table = ".".join(json.dumps(part) if "-" in part else part for part in path[:-1])
    return f"[{table}]\n{path[-1]} = {value}\n"


@pytest.mark.parametrize(
    ("dotted", "value"),
    [(key, value) for key, values in LOOSENING_BY_TYPE.items() for value in values],
)
def test_a_project_value_of_the_wrong_type_is_an_error_never_a_loosening(
    tmp_path: Path, dotted: str, value: str
) -> None:
    project_file = tmp_path / ".loom.toml"
    project_file.write_text('[model]\ndefault = "anthropic:claude-sonnet-4-6"\n'
                            + toml_line(tuple(dotted.split(".")), value))  # fmt: skip
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, environ={})
    message = str(info.value)
    assert f"{project_file.resolve()}:4: '{dotted}' " in message  # file, line and key
    expected = EXPECTED.get(dotted, "must be a whole number (without quotes)")
    assert expected in message, message
    assert "fix the value in that file" in message


def test_the_error_says_what_was_written() -> None:
    from loom.config_errors import what_it_is

    assert what_it_is("true") == "the string 'true'"
    assert what_it_is("\x1b]52;c;eA==\x07") == "the string '\\x1b]52;c;eA==\\x07'"
    assert what_it_is(64.0) == "the number 64.0" and what_it_is(True) == "the boolean true"


def test_typed_values_still_tighten_and_loosen_as_before(tmp_path: Path) -> None:
    (tmp_path / ".loom.toml").write_text(
        "[sandbox]\nnetwork = true\nmax_memory_mb = 64\n"
        "[agents]\nmax_depth = 0\n[checkpoints]\nenabled = false\n"
    )
    config = load_config(tmp_path, environ={})
    assert config.sandbox.network is False  # loosening: ignored, said
    assert config.checkpoints.enabled is True  # a project cannot turn undo off
    assert (config.sandbox.max_memory_mb, config.agents.max_depth) == (64, 0)  # tighter: kept
    ignored = " ".join(config.warnings)
    assert "'sandbox.network' is ignored" in ignored
    assert "'checkpoints.enabled' is ignored in a project file (undo is your safety net" in ignored


def test_the_persons_own_file_may_turn_checkpoints_off_and_a_project_back_on(
    tmp_path: Path,
) -> None:
    user = LoomPaths.from_env().user_config_file
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("[checkpoints]\nenabled = false\n")
    assert load_config(tmp_path, environ={}).checkpoints.enabled is False
    (tmp_path / ".loom.toml").write_text("[checkpoints]\nenabled = true\n")
    config = load_config(tmp_path, environ={})
    assert config.checkpoints.enabled is True and not config.warnings


def _takes_text(annotation: Any) -> bool:
    """Does the key take a string (`str`, `str | None`, a Literal of strings)?"""
    if annotation is str or get_origin(annotation) is Literal:
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        return any(_takes_text(arg) for arg in get_args(annotation))
    return False


def _annotation(path: tuple[str, ...]) -> Any:
    model: Any = LoomConfig
    info: Any = None
    for part in path:
        fields = {(field.alias or name): field for name, field in model.model_fields.items()}
        info = fields[part]
        model = info.annotation
    return info.annotation


@pytest.mark.parametrize("path", config_keys(), ids=lambda path: ".".join(path))
def test_every_key_refuses_a_value_of_another_type_in_a_file(
    tmp_path: Path, path: tuple[str, ...]
) -> None:
    """Walks every key of the model: a string where something else belongs, a number
    where a string belongs; in the person's file as in a project's."""
    annotation = _annotation(path)
    wrong = "7" if _takes_text(annotation) else '"7"'  # a Literal takes only its strings
    user = LoomPaths.from_env().user_config_file
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(toml_line(path, wrong))
    dotted = ".".join(path)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, environ={})
    assert f"{user}:2: '{dotted}" in str(info.value), (declared(path), str(info.value))


def test_the_environment_is_text_and_still_converted(tmp_path: Path) -> None:
    config = load_config(tmp_path, environ={"LOOM_SHELL_TIMEOUT": "30", "LOOM_REPO_WATCH": "0"})
    assert config.shell.timeout == 30.0 and config.repo.watch_enabled is False
