"""Pick the sandbox this machine offers, check once that it really starts, and wrap
agent commands in it.

`Sandbox` is what the tools receive (as their `launcher`): `wrap(argv, cwd)` gives the
argv to spawn and the descriptors to pass to it, `status()` says whether commands run
confined (for permission prompts), `explain(output, failed)` adds a line when a failure
came from the sandbox.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from loom._gitsafe import hooks_folder
from loom.sandbox.gitdirs import git_dirs
from loom.sandbox.limits import CommandGroup, cgroup_parents, join_then_exec, make_group
from loom.sandbox.policy import SandboxPolicy, WritableRoot
from loom.sandbox.refusals import explain_refusal, swept_note
from loom.sandbox.sweep import Sweeper, started, take_away_new

if TYPE_CHECKING:
    from loom.sandbox.session_net import SessionNet
    from loom.sandbox.session_temp import SessionTemp

log = logging.getLogger(__name__)
SMOKE_TIMEOUT_S = 10.0


class Backend(Protocol):
    name: str
    version: str

    def wrap(
        self, policy: SandboxPolicy, argv: Sequence[str], cwd: Path
    ) -> tuple[list[str], tuple[int, ...]]:
        """(argv to spawn, descriptors to pass to it; the caller closes them after)."""
        ...

    def enforced(self, policy: SandboxPolicy) -> list[str]: ...


@dataclass(frozen=True)
class Detection:
    backend: Backend | None
    problem: str  # why there is none ("" when there is one)


_detected: list[Detection] = []
_detect_lock = threading.Lock()


def detect() -> Detection:
    """The working backend on this machine, found and started once per process
    (thread-safe: a session may start it early on a worker thread, see `detect_soon`)."""
    with _detect_lock:
        if not _detected:
            _detected.append(_detect())
        return _detected[0]


def detect_soon() -> None:
    """Start `detect()` on a worker thread (it spawns a process, ~10-20 ms), so a
    session's start-up overlaps it with other work; `detect()` then waits for it."""
    if not _detected:
        threading.Thread(target=detect, name="loom-sandbox-detect", daemon=True).start()


def _detect() -> Detection:
    if sys.platform.startswith("linux"):
        from loom.sandbox.bwrap import Bubblewrap, find_bwrap

        executable = find_bwrap()
        if executable is None:
            return Detection(
                None,
                "bubblewrap (bwrap) is not installed; install it with "
                "`apt-get install bubblewrap` (scripts/setup does this)",
            )
        return _smoke_test(Bubblewrap(executable))
    if sys.platform == "darwin":
        from loom.sandbox.seatbelt import SANDBOX_EXEC, Seatbelt

        if not os.path.exists(SANDBOX_EXEC):
            return Detection(None, f"{SANDBOX_EXEC} is missing")
        return _smoke_test(Seatbelt())
    return Detection(None, f"Loom has no sandbox for {sys.platform}")


def _smoke_test(backend: Backend) -> Detection:
    """Start `true` under the strictest policy (network off), as every command would."""
    from loom.sandbox.policy import build_policy

    here = Path.cwd() if Path.cwd().is_dir() else Path("/")
    policy = build_policy(here, network=False)
    argv, fds = backend.wrap(policy, ["/bin/sh", "-c", "true"], policy.project_root)
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=SMOKE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            pass_fds=fds,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Detection(None, f"{backend.name} could not start: {exc}")
    finally:
        for fd in fds:
            os.close(fd)
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        hint = ""
        if backend.name == "bubblewrap":
            hint = (
                " (unprivileged user namespaces may be off: kernel.unprivileged_userns_clone, "
                "user.max_user_namespaces, AppArmor's restrict_unprivileged_userns, or a "
                "container's seccomp profile)"
            )
        return Detection(None, f"{backend.name} cannot create a sandbox here: {detail}{hint}")
    return Detection(backend, "")


def _sweep_roots(policy: SandboxPolicy) -> list[Path]:
    """Where a command could leave a file Loom reads: the writable folders in the project
    (the project root itself, unless it is the home folder or `/`, which never are)."""
    root = policy.project_root
    return [path for path in policy.writable_paths() if path == root or root in path.parents]


def _missing_hooks_folder(policy: SandboxPolicy) -> Path | None:
    """The folder `core.hooksPath` names when it lies in the project and does not exist
    (an existing one is mounted read-only): one a command makes is taken away after it."""
    root = policy.project_root
    named = hooks_folder(str(root)) if git_dirs(root) else None
    if named is None or os.path.lexists(named):
        return None
    path = Path(os.path.normpath(named))
    return path if root in path.parents else None


class Sandbox:
    """The launcher for one session's agent commands."""

    def __init__(
        self,
        policy: SandboxPolicy,
        detection: Detection | None = None,
        *,
        sweepers: list[Sweeper] | None = None,
    ) -> None:
        """`sweepers`: another sandbox's for the same project (what they learned holds)."""
        self.policy = policy
        if policy.mode == "on":
            detection = detection or detect()
        else:
            detection = Detection(None, f'[sandbox] mode is "{policy.mode}"')
        self.backend = detection.backend
        self.problem = detection.problem
        self._limits_group: CommandGroup | None = None
        self._group_lock = threading.Lock()
        self._temp: SessionTemp | None = None  # for_session's, removed by close()
        self._shares_net = False  # for_session's: one network namespace (session_net.py)
        self._net: SessionNet | None = None
        self._net_failed = False
        if sweepers is not None:
            self._sweepers = sweepers
        else:
            self._sweepers = [Sweeper(root) for root in _sweep_roots(policy)]
        if sweepers is None and self.backend is not None and self._sweepers:  # learn the tree
            threading.Thread(
                target=self._prepare_sweepers, name="loom-sandbox-sweep", daemon=True
            ).start()

    @property
    def active(self) -> bool:
        """Commands run confined."""
        return self.backend is not None

    @property
    def unavailable(self) -> bool:
        """The sandbox is wanted (mode "on") but this machine cannot provide one."""
        return self.policy.mode == "on" and self.backend is None

    @property
    def network_requestable(self) -> bool:
        """The network is off in the sandbox, and a command may ask a person for it."""
        return self.active and not self.policy.network

    def with_network(self) -> Sandbox:
        """This sandbox with the network on (for one approved command); the same temp
        folder."""
        return self._derived(dataclasses.replace(self.policy, network=True))

    def for_session(self) -> Sandbox:
        """This sandbox for one session: its commands get a temp folder of their own
        (see `session_temp.py`), kept until `close()`. Without a backend commands run
        unconfined anyway, and get none."""
        if self.backend is None:
            return self._derived(self.policy)
        from loom.sandbox.session_temp import SessionTemp

        try:
            temp = SessionTemp()
        except OSError as exc:  # no room in the temp folder: a fresh /tmp per command
            log.warning("no temp folder for this session's commands (%s); each gets its own", exc)
            return self._derived(self.policy)
        sandbox = self._derived(dataclasses.replace(self.policy, temp=temp.path))
        sandbox._temp = temp
        sandbox._shares_net = self.backend.name == "bubblewrap"
        return sandbox

    def _derived(self, policy: SandboxPolicy) -> Sandbox:
        return Sandbox(policy, Detection(self.backend, self.problem), sweepers=self._sweepers)

    def close(self) -> None:
        """The session is over: remove its temp folder and its limits' cgroup."""
        temp, self._temp = self._temp, None
        if temp is not None:
            temp.close()
        with self._group_lock:
            group, self._limits_group = self._limits_group, None
            net, self._net, self._shares_net = self._net, None, False
        if group is not None:
            group.close()
        if net is not None:
            net.close()

    def wrap(self, argv: Sequence[str], cwd: Path) -> tuple[list[str], tuple[int, ...]]:
        """(argv to spawn, descriptors to pass to it; the caller closes them after)."""
        if self.backend is None:
            return list(argv), ()
        return self.backend.wrap(self.policy, argv, cwd)

    def launch(
        self, argv: Sequence[str], cwd: Path
    ) -> tuple[list[str], tuple[int, ...], Callable[[], list[str]]]:
        """`wrap`, plus what to call once the command is over (see `sweep.py`): guarded
        files it created are taken away before Loom reads them. It returns notes for
        the model."""
        since = started()
        policy = self.policy
        if self.backend is None:
            return list(argv), (), list
        self._prepare_sweepers()  # waits for the first walk (started with the session)
        nested = tuple(path for sweeper in self._sweepers for path in sweeper.nested_git())
        if nested:
            policy = dataclasses.replace(policy, nested_git=nested)
        wrapped, fds, policy = self._wrap_limited(policy, argv, cwd)

        sweepers, root = self._sweepers, policy.project_root
        hooks = _missing_hooks_folder(policy) if sweepers else None

        def finish() -> list[str]:
            taken = [
                (sweeper.root / path).relative_to(root).as_posix()
                for sweeper in sweepers
                for path in sweeper.sweep(since, policy.quarantine)
            ]
            if hooks is not None:
                taken += take_away_new(root, hooks, policy.quarantine)
            return [swept_note(taken, policy.quarantine)] if taken else []

        return wrapped, fds, finish

    def serve(
        self, argv: Sequence[str], cwd: Path, *, private: Sequence[Path] = ()
    ) -> tuple[list[str], tuple[int, ...]]:
        """`wrap` for a long-lived program Loom starts for itself that reads the project
        (a language server): the agent commands' confinement and limits, plus its own
        `private` folders (its home and caches) writable, even where they lie in Loom's
        hidden folders. Nothing is swept: the program is not over when this returns."""
        if self.backend is None:
            return list(argv), ()
        own = tuple(WritableRoot(Path(os.path.realpath(p)), "private folder") for p in private)
        policy = dataclasses.replace(self.policy, writable=(*self.policy.writable, *own))
        wrapped, fds, _policy = self._wrap_limited(policy, argv, cwd)
        return wrapped, fds

    def _wrap_limited(
        self, policy: SandboxPolicy, argv: Sequence[str], cwd: Path
    ) -> tuple[list[str], tuple[int, ...], SandboxPolicy]:
        """The backend's wrap in this sandbox's cgroup where one can be made (the limits
        then hold for all of its processes together): (argv, fds, the policy used)."""
        assert self.backend is not None
        group = self._group() if self.backend.name == "bubblewrap" else None
        if group is not None and cgroup_parents().caps_memory:
            policy = dataclasses.replace(policy, memory_by_cgroup=True)
        if group is not None and cgroup_parents().caps_processes:
            policy = dataclasses.replace(policy, processes_by_cgroup=True)
        net = self._session_net() if not policy.network else None
        if net is not None:
            policy = dataclasses.replace(policy, shared_net=tuple(net.prefix()))
        wrapped, fds = self.backend.wrap(policy, argv, cwd)
        if group is not None:
            wrapped = join_then_exec(group, wrapped)
        return wrapped, fds, policy

    def _prepare_sweepers(self) -> None:
        for sweeper in self._sweepers:
            sweeper.prepare()

    def _session_net(self) -> SessionNet | None:
        """The session's network namespace, its holder started on first use (again if it
        died); None for one namespace per command (not a session's sandbox, or no
        holder could start: said once)."""
        if not self._shares_net or self.backend is None:
            return None
        with self._group_lock:
            if self._net is not None and self._net.alive:
                return self._net
            if self._net_failed:
                return None
            from loom.sandbox.session_net import SessionNet

            executable = getattr(self.backend, "executable", "bwrap")
            try:
                self._net = SessionNet(executable)
            except OSError as exc:
                self._net_failed = True
                log.warning("each command gets a network namespace of its own: %s", exc)
                return None
            return self._net

    def _group(self) -> CommandGroup | None:
        """This sandbox's cgroup (see limits.py), made on first use; None where none can
        be made (the rlimits inside the sandbox still apply)."""
        if not self.policy.limits.any:
            return None
        with self._group_lock:
            if self._limits_group is None or not self._limits_group.usable():
                group = make_group(self.policy.limits)
                if group is not None:
                    weakref.finalize(self, group.close)
                self._limits_group = group
            return self._limits_group

    def status(self) -> tuple[bool, str]:
        """(sandboxed, a short text for a permission prompt)."""
        if self.backend is None:
            return False, f"runs without a sandbox ({self.problem})"
        network = "network on" if self.policy.network else "network off"
        return True, (
            f"runs sandboxed ({self.backend.name}): writes only in the project and its "
            f"own temp (not .git); {network}"
        )

    def model_note(self) -> str:
        """A sentence for the tool description, so the model knows the limits up front."""
        if self.backend is None:
            return ""
        network = (
            ""
            if self.policy.network
            else (
                " No network (nor DNS): set `network: true` on a command that needs it "
                "(the person is asked)."
            )
        )
        return (
            "Sandboxed: writes only in the project and /tmp ($TMPDIR: this session's "
            "own, emptied when it ends), but not the project's .git, "
            ".loom.toml, .mcp.json or .loom/ (commit with the git tool; Loom's files with "
            f"file_write).{network}"
        )

    def explain(self, output: str, failed: bool) -> str | None:
        if self.backend is None:
            return None
        return explain_refusal(self.policy, output, failed)

    def notice(self) -> str | None:
        """The one start-of-session notice when commands will not be confined."""
        if self.policy.mode == "on" and self.backend is None:
            return (
                f"no sandbox for agent commands on this machine: {self.problem}. "
                "Every shell command will ask first (--yes does not cover it; "
                "--no-sandbox runs commands unconfined)."
            )
        if self.policy.mode == "ask":
            return '[sandbox] mode is "ask": shell commands run unconfined and each one asks first.'
        if self.policy.mode == "off":
            return "the sandbox is off: agent commands run unconfined."
        return None
