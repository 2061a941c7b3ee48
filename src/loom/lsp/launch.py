"""How Loom starts a project's language servers: confined, with little, and never with
an executable the project chose unless the person trusts it (design principle 8).

A language server reads the project, and some run the project's programs: basedpyright
runs the interpreter it finds in `.venv` to learn the search paths. So each server

- runs in the session's sandbox (`Sandbox.serve`: the project writable, everything else
  read-only, Loom's folders hidden, no network unless the session has it), with a
  private folder of its own for HOME, caches and temp files (in Loom's cache, outside
  the project, bound into the sandbox explicitly);
- gets an environment built from an allow-list (PATH: the server's own install, the
  person's PATH folders outside the project and the system folders; the private HOME
  and TMPDIR, the locale, TERM), never the person's API keys, tokens or other variables;
- in an untrusted project (or one whose interpreter changed since it was trusted) is
  pointed at a known-safe interpreter (`python.pythonPath` = the system Python) and
  never found through a PATH folder inside the project, so nothing of the project runs.

Without a sandbox (`--no-sandbox`, no bwrap) the environment and the interpreter rule
still hold.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loom.paths import LoomPaths

# Where system programs live: always on a server's PATH.
SYSTEM_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
# The person's variables a server may see: the locale and the terminal type, no more.
PASSED_VARIABLES = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TZ")


class LaunchError(Exception):
    """A server cannot be started as configured; the message says what to do."""


def private_home(paths: LoomPaths, root: Path) -> Path:
    """The language servers' own folder for one project (HOME, caches, temp files): in
    Loom's cache, which agent commands cannot see, and never in the project."""
    key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    return paths.cache / "lsp" / key


def safe_python() -> str:
    """An interpreter no project chose: the system's python3, else Loom's own."""
    return shutil.which("python3", path=os.pathsep.join(SYSTEM_PATH)) or sys.executable


@dataclass(frozen=True)
class ServerLaunch:
    """How the language servers of one project start (one per session; see `provide`).

    `sandbox`: the session's `loom.sandbox.Sandbox` (None: no sandbox); `trust`: the
    project's `loom.trust.ProjectTrust` (None: untrusted)."""

    root: Path
    home: Path
    sandbox: Any = None
    trust: Any = None

    @classmethod
    def for_project(
        cls, root: Path, *, paths: LoomPaths | None = None, sandbox: Any = None, trust: Any = None
    ) -> ServerLaunch:
        root = Path(root).resolve()
        home = private_home(paths or LoomPaths.from_env(), root)
        return cls(root, home, sandbox, trust)

    @property
    def sandboxed(self) -> bool:
        return self.sandbox is not None and bool(self.sandbox.active)

    def project_interpreter_allowed(self) -> bool:
        """The project's own interpreter may run (sandboxed): trusted as it is now."""
        return self.trust is not None and bool(self.trust.allows_interpreter())

    def resolve(self, command: list[str]) -> list[str]:
        """The server's argv with its program found: on the person's PATH (never a
        relative folder, nor one inside an untrusted project) or next to Loom's Python."""
        if not command:
            raise LaunchError("the language-server command is empty; fix [lsp] servers in config")
        exe = command[0]
        folders = [*self._search_path(), str(Path(sys.executable).parent)]
        found = shutil.which(exe, path=os.pathsep.join(folders))
        if found is None:
            raise LaunchError(
                f"language server {exe!r} is not installed (not on PATH nor in "
                f"{Path(sys.executable).parent}{self._skipped_note()}); install it or "
                "change [lsp] servers"
            )
        return [found, *command[1:]]

    def _search_path(self) -> list[str]:
        folders = []
        for folder in os.environ.get("PATH", "").split(os.pathsep):
            if not folder or not os.path.isabs(folder):
                continue  # "" or "." would find a program in the project
            if self._inside_project(folder) and not self.project_interpreter_allowed():
                continue
            folders.append(folder)
        return folders

    def _inside_project(self, folder: str) -> bool:
        real = Path(os.path.realpath(folder))
        return real == self.root or self.root in real.parents

    def _skipped_note(self) -> str:
        if self.project_interpreter_allowed():
            return ""
        inside = [
            f for f in os.environ.get("PATH", "").split(os.pathsep) if f and self._inside_project(f)
        ]
        if not inside:
            return ""
        return (
            f"; PATH folders inside the project ({', '.join(inside)}) are not searched "
            "until you trust it with `loom trust`"
        )

    def environment(self, argv: list[str]) -> dict[str, str]:
        """What the server's process starts with (an allow-list, see the module doc)."""
        own = str(Path(argv[0]).parent)
        # the server's own folder first (its runtime: node beside pyright), then the
        # person's PATH outside the project (a `go` in /usr/local/go/bin for gopls, a
        # pip --user install), then the system's; never a folder in an untrusted project
        path = list(dict.fromkeys([own, *self._search_path(), *SYSTEM_PATH]))
        temp = self.home / "tmp"
        temp.mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": os.pathsep.join(path),
            "HOME": str(self.home),
            "TMPDIR": str(temp),
            "PYTHONSAFEPATH": "1",  # an interpreter it runs never imports from its cwd
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env.update({name: os.environ[name] for name in PASSED_VARIABLES if name in os.environ})
        return env

    def command(self, argv: list[str]) -> tuple[list[str], tuple[int, ...]]:
        """(argv to spawn, descriptors to pass and then close): in the sandbox when the
        session has one, with the private folder writable there."""
        if not self.sandboxed:
            return argv, ()
        self.home.mkdir(parents=True, exist_ok=True)  # a mount needs it to exist
        return self.sandbox.serve(argv, self.root, private=[self.home])

    def configuration(self, section: Any) -> Any:
        """The answer to the server's `workspace/configuration` for `section`: in an
        untrusted project, `python.pythonPath` is the safe interpreter (basedpyright
        and pyright then neither look for `.venv` nor run one), with the project's own
        packages, if any, read as plain search paths; else nothing (the defaults)."""
        if section != "python" or self.project_interpreter_allowed():
            return None
        answer: dict[str, Any] = {"pythonPath": safe_python()}
        packages = self._package_folders()
        if packages:
            answer["analysis"] = {"autoSearchPaths": True, "extraPaths": packages}
        return answer

    def _package_folders(self) -> list[str]:
        """The site-packages folders of the project's virtual environments, read (never
        run) for import resolution; only ones that lie in the project."""
        found = []
        for venv in (".venv", "venv"):
            for folder in sorted((self.root / venv / "lib").glob("python3*/site-packages")):
                if folder.is_dir() and self._inside_project(str(folder)):
                    found.append(str(folder))
        return found
