"""`loom sandbox check` as a person runs it, with real probes (the command runs in this
process; each probe is a real sandboxed process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import loom
from tests.support.loom_cli import Done, loom_in_process
from tests.support.sandbox import require_sandbox


def loom_sandbox_check(cwd: Path, *args: str) -> Done:
    return loom_in_process(["sandbox", "check", *args], cwd, None)


def test_check_prints_what_is_enforced_and_proves_it(tmp_path: Path, loom_home: Path) -> None:
    require_sandbox()
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".githooks").mkdir()
    subprocess.run(["git", "-C", str(tmp_path), "config", "core.hooksPath", ".githooks"])
    done = loom_sandbox_check(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert out.startswith("Sandbox: on (bubblewrap ")
    assert f"  {tmp_path.resolve()}  (project root)" in out
    assert "Hidden (Loom's own state" in out
    assert f"  {(loom_home / 'data').resolve()}  (Loom data: threads, loom.db" in out
    assert f"  {(tmp_path / '.git').resolve()}" in out  # read-only inside
    assert "network: off" in out and "all capabilities dropped" in out
    probes = (
        "write inside", "write outside", "network off", "unix sockets", ".git read-only",
        "new Loom config", "hidden folder", "shared temp", "process limit", "file size limit",
        "memory limit",
    )  # fmt: skip
    for probe in probes:
        assert f"  ok   {probe}:" in out
    # this project's own protected list, proven live
    assert f"  ok   hidden {(loom_home / 'data').resolve()}: empty and read-only inside" in out
    assert f"  ok   read-only {(tmp_path / '.git').resolve()}: a write was refused" in out
    assert f"  ok   read-only {(tmp_path / '.githooks').resolve()}: a write was refused" in out
    # Loom's own code is warned about only where a command could write it (the shared
    # temp folder, where CI's clean clone may be, no longer is such a place)
    code = [Path(sys.prefix).resolve(), Path(loom.__file__).parent.resolve()]
    project = tmp_path.resolve()
    writable_code = any(p == project or project in p.parents for p in code)
    assert ("Warning: Loom's own code" in out) is writable_code, out
    assert not list((tmp_path / ".git").glob(".loom-sandbox-probe"))
    assert "Not sandboxed: language servers" in out

    report = json.loads(loom_sandbox_check(tmp_path, "--json").stdout)
    assert report["mode"] == "on" and report["backend"].startswith("bubblewrap")
    assert report["network"] is False
    assert all(probe["passed"] for probe in report["probes"]), report["probes"]
    assert len(report["probes"]) == len(probes) + 4 + 2  # 4 Loom folders, .git, .githooks
    assert bool(report["loom_code_writable"]) is writable_code


def test_check_warns_when_looms_own_code_is_writable(tmp_path: Path, loom_home: Path) -> None:
    """Loom installed into a folder commands may write (the project's own virtualenv):
    a command could change the code the next `loom` runs outside the sandbox."""
    require_sandbox()
    config = loom_home / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f"[sandbox]\nwritable = [{json.dumps(sys.prefix)}]\n")
    done = loom_sandbox_check(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Warning: Loom's own code ({Path(sys.prefix).resolve()}" in done.stdout
    report = json.loads(loom_sandbox_check(tmp_path, "--json").stdout)
    assert str(Path(sys.prefix).resolve()) in report["loom_code_writable"]


def test_check_with_the_sandbox_off(tmp_path: Path, loom_home: Path) -> None:
    config = loom_home / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[sandbox]\nmode = "off"\n')
    done = loom_sandbox_check(tmp_path)
    assert done.returncode == 0
    assert done.stdout.startswith('Sandbox: OFF ([sandbox] mode = "off")')
