"""`loom map` in a new process on an unchanged tree: it stats the files it knows and
reads its caches, and loads nothing it only needs when something moved (the installed
plugins' metadata, the ignore rules' matcher, tree-sitter)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.plugins import SITE

ROOT = Path(__file__).resolve().parents[2]


def _map(project: Path, python_path: str = "") -> subprocess.CompletedProcess[str]:
    # no config layer (the person's usual case): LOOM_* variables other than the home
    # would count as one, and loading the config costs more than the whole warm map
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("LOOM_") or key in ("LOOM_HOME", "LOOM_ALLOW_MODEL_REQUESTS")
    }
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [python_path, str(ROOT)]))
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "loom", "map", "--root", str(project)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def _imported(done: subprocess.CompletedProcess[str]) -> set[str]:
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / "pkg" / "deep").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("build/\n")
    (project / "build").mkdir()
    (project / "build" / "gen.py").write_text("def generated(): pass\n")
    (project / "pkg" / "core.py").write_text("def helper(x):\n    return x\n")
    (project / "pkg" / "deep" / "use.py").write_text(
        "from pkg.core import helper\n\ndef main():\n    return helper(1)\n"
    )
    _age(project)
    return project


def _age(project: Path) -> None:
    """Every file and folder a minute old: what changed within the last seconds is
    looked at again on each scan (its mtime may yet hide a change)."""
    old = os.stat(project).st_mtime - 60
    for folder, _dirs, files in os.walk(project):
        for name in files:
            os.utime(os.path.join(folder, name), (old, old))
        os.utime(folder, (old, old))


def test_a_warm_map_loads_no_plugin_metadata_and_no_ignore_matcher(tmp_path: Path) -> None:
    project = _project(tmp_path)
    first = _map(project)
    assert "helper" in first.stdout and "generated" not in first.stdout
    warm = _map(project)
    assert warm.stdout == first.stdout
    loaded = _imported(warm)
    assert "importlib.metadata" not in loaded  # the entry points' saved answer stands
    assert "pathspec" not in loaded  # no directory changed: no ignore rule to match
    assert "tree_sitter" not in loaded  # no file changed: nothing to parse


def test_a_warm_map_still_sees_edits_new_files_and_ignore_changes(tmp_path: Path) -> None:
    project = _project(tmp_path)
    _map(project)
    (project / "pkg" / "core.py").write_text("def renamed_helper(x):\n    return x\n")
    assert "renamed_helper" in _map(project).stdout  # edited in place
    (project / "pkg" / "deep" / "more.py").write_text("def brand_new(): pass\n")
    assert "brand_new" in _map(project).stdout  # a new file
    (project / ".gitignore").write_text("")
    assert "generated" in _map(project).stdout  # no longer ignored


def test_a_plugin_changed_in_place_is_seen_by_the_next_process(tmp_path: Path) -> None:
    """The saved entry points hold only while every installed distribution's
    entry_points.txt is as it was (an editable plugin edited in place moves no folder)."""
    site = tmp_path / "site"
    shutil.copytree(SITE, site)
    project = _project(tmp_path)
    (project / "api.proto").write_text("message Order {\n}\n")
    assert "Order" in _map(project, str(site)).stdout
    points = site / "loom_shout-0.1.dist-info" / "entry_points.txt"
    mtime = os.stat(site).st_mtime_ns
    points.write_text(points.read_text().replace("proto = loom_shout.proto:extractor\n", ""))
    assert os.stat(site).st_mtime_ns == mtime
    assert "Order" not in _map(project, str(site)).stdout
