"""A hostile project against the language server, through a real session: the model calls
`lsp_diagnostics` (a read tool, so nobody is asked) and the real basedpyright starts.

The project ships `.venv/bin/python`, a script that records its environment and `id`
in a folder outside every writable one and in the project, then runs the system Python
(so the server still works). Untrusted, it must never run; trusted, it runs only in the
sandbox, with no secret of the person's in its environment."""

from __future__ import annotations

import base64
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from loom.config import load_config
from loom.llm.scripted import ScriptedProvider, tool_turn
from loom.session import SessionSpec
from tests.support.sandbox import require_sandbox
from tests.support.sessions import make_workspace

SERVER = "basedpyright-langserver"
pytestmark = pytest.mark.skipif(
    not (shutil.which(SERVER) or (Path(sys.executable).parent / SERVER).exists()),
    reason="basedpyright is not installed (scripts/setup installs it)",
)
SECRET = "sk-test-not-for-language-servers"
MAIN = "label: str = 1\n"


@dataclass
class Attack:
    project: Path
    outside: Path  # writable by nobody in the sandbox: a host run leaves its marker here

    def fake_python(self) -> str:
        return (
            "#!/bin/sh\n"
            f'{{ id; env; }} > "{self.outside}/ran.$$" 2>/dev/null\n'
            f'mkdir -p "{self.project}/.ran" 2>/dev/null\n'
            f'{{ id; env; }} > "{self.project}/.ran/ran.$$" 2>/dev/null\n'
            'exec /usr/bin/python3 "$@"\n'
        )

    def plant(self) -> None:
        python = self.project / ".venv" / "bin" / "python"
        python.parent.mkdir(parents=True)
        python.write_text(self.fake_python())
        python.chmod(0o755)

    def host_runs(self) -> list[Path]:
        return sorted(self.outside.iterdir())

    def runs(self) -> list[str]:
        found = self.project / ".ran"
        return [p.read_text() for p in sorted(found.iterdir())] if found.is_dir() else []


@pytest.fixture
def attack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Attack:
    project, outside, systmp = tmp_path / "proj", tmp_path / "outside", tmp_path / "systmp"
    for folder in (project, outside, systmp):
        folder.mkdir()
    (project / "main.py").write_text(MAIN)
    monkeypatch.setattr(tempfile, "tempdir", str(systmp))  # the sandbox's writable temp
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    monkeypatch.chdir(project)  # where the person started Loom
    return Attack(project, outside)


async def _run(project: Path, *turns: object, config: dict | None = None) -> list[str]:
    """One session in `project` whose model makes these calls; the tool results."""
    provider = ScriptedProvider([*turns, "done"])  # type: ignore[list-item]
    ws = make_workspace(project, provider, config=config)
    try:
        session = await ws.start_session(SessionSpec(auto_approve=True))
        await session.send_message("check main.py")
        return [str(m.content) for m in session.thread.messages if getattr(m, "role", "") == "tool"]
    finally:
        await ws.shutdown()


def _diagnostics_call() -> object:
    return tool_turn("lsp_diagnostics", {"path": "main.py", "severity": "error"})


async def test_an_untrusted_projects_interpreter_never_runs(attack: Attack) -> None:
    attack.plant()
    package = attack.project / ".venv" / "lib" / "python3.11" / "site-packages" / "vendored"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("def count() -> int:\n    return 1\n")
    (attack.project / "uses.py").write_text("from vendored import count\nname: str = count()\n")
    uses = tool_turn("lsp_diagnostics", {"path": "uses.py", "severity": "error"})
    results = await _run(attack.project, _diagnostics_call(), uses)
    assert 'not assignable to declared type "str"' in results[0]  # the server did work
    assert attack.host_runs() == []
    assert attack.runs() == []  # not even in the sandbox: pointed at the system Python
    # the venv's packages are still read (never run) for imports
    assert '"int" is not assignable to declared type "str"' in results[1]
    assert "could not be resolved" not in results[1]


async def test_a_trusted_projects_interpreter_runs_only_sandboxed(attack: Attack) -> None:
    require_sandbox()
    attack.plant()
    load_config(attack.project, project_root=attack.project).trust.trust()
    results = await _run(attack.project, _diagnostics_call())
    assert 'not assignable to declared type "str"' in results[0]
    runs = attack.runs()
    assert runs, "the trusted project's interpreter was not used"
    assert attack.host_runs() == []  # it could not write outside the sandbox
    for seen in runs:
        assert SECRET not in seen and "OPENAI_API_KEY" not in seen
        home = next(line for line in seen.splitlines() if line.startswith("HOME="))
        assert "/cache/lsp/" in home and str(attack.project) not in home


async def test_a_command_that_plants_an_interpreter_gets_no_run_on_the_host(
    attack: Attack,
) -> None:
    require_sandbox()
    script = base64.b64encode(attack.fake_python().encode()).decode()
    plant = (
        "mkdir -p .venv/bin && echo " + script + " | base64 -d > .venv/bin/python "
        "&& chmod +x .venv/bin/python && echo planted"
    )
    results = await _run(
        attack.project, tool_turn("shell", {"command": plant}), _diagnostics_call()
    )
    assert "planted" in results[0]
    assert 'not assignable to declared type "str"' in results[1]
    assert attack.host_runs() == []
    assert attack.runs() == []


async def test_without_the_sandbox_the_server_still_gets_no_secrets(attack: Attack) -> None:
    """--no-sandbox: a trusted project's interpreter runs as the person chose, but with
    the language server's own small environment, never the person's keys."""
    attack.plant()
    load_config(attack.project, project_root=attack.project).trust.trust()
    results = await _run(attack.project, _diagnostics_call(), config={"sandbox.mode": "off"})
    assert 'not assignable to declared type "str"' in results[0]
    runs = attack.runs()
    assert runs and len(attack.host_runs()) == len(runs)  # unconfined, as asked
    for seen in runs:
        assert SECRET not in seen and "GITHUB_TOKEN" not in seen


def test_loom_diagnostics_starts_the_server_as_a_session_does(attack: Attack) -> None:
    """`loom diagnostics` in a trusted project: its interpreter runs, in the sandbox."""
    require_sandbox()
    from tests.support.loom_cli import loom

    attack.plant()
    temp = tempfile.gettempdir()  # the sandbox's writable temp, as in this process
    trusted = loom(["trust", "--yes"], attack.project, None, TMPDIR=temp)
    assert trusted.returncode == 0, trusted.stderr
    done = loom(
        ["diagnostics", "main.py", "--severity", "error"], attack.project, None, TMPDIR=temp
    )
    assert 'not assignable to declared type "str"' in done.stdout, done.stderr
    assert attack.runs() and attack.host_runs() == []


async def test_a_server_program_in_an_activated_project_venv_is_not_used(
    attack: Attack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person activated the project's venv (its bin/ first on PATH) and the clone
    ships its own `basedpyright-langserver` there: Loom starts its own install instead."""
    bin_dir = attack.project / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    fake = bin_dir / SERVER
    fake.write_text(attack.fake_python().replace('exec /usr/bin/python3 "$@"', "exit 1"))
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    results = await _run(attack.project, _diagnostics_call())
    assert 'not assignable to declared type "str"' in results[0]
    assert attack.host_runs() == [] and attack.runs() == []


def test_a_server_finds_the_persons_tools_but_no_folder_of_an_untrusted_project(
    attack: Attack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gopls runs `go` from /usr/local/go/bin, a pip --user server lives in ~/.local/bin:
    the person's PATH outside the project reaches a server; .venv/bin inside does not."""
    from loom.lsp.launch import ServerLaunch

    tools = tmp_path / "go" / "bin"
    inside = attack.project / ".venv" / "bin"
    monkeypatch.setenv("PATH", f"{inside}:{tools}:/usr/bin:relative/bin")
    launch = ServerLaunch(attack.project.resolve(), tmp_path / "lsp-home")
    path = launch.environment(["/opt/server/bin/gopls"])["PATH"].split(os.pathsep)
    assert path[:2] == ["/opt/server/bin", str(tools)]
    assert "/usr/bin" in path and "/bin" in path
    assert str(inside) not in path and "relative/bin" not in path
