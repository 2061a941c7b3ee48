"""The one way Loom runs git: so that nothing in a repository can make it run a program
or point it somewhere else.

Every git call of Loom's own (gitmeta's status after each change, checkpoints, undo,
auto-commit, the web Changes tab, REPL `/diff`) and every call of the agent's `git` tool
goes through `run_git` / `run_git_async`:

- the environment: every `GIT_*` variable of Loom's own environment is dropped (they can
  redirect the repository, the index, the config or the programs git runs) but the
  author and committer identity, then a fixed safe set is added (no system config, no
  prompts, no lazy fetches, `cat` as pager);
- fixed `-c` overrides on every call: `core.fsmonitor=false`, `core.hooksPath` at an
  empty place (`/dev/null`: no hook can ever be found there), no external diff, pager,
  editor, askpass, ssh command, credential helper or gpg;
- every other configured key that names a program (diff drivers and textconv, merge
  drivers, per-command pagers, remote helpers, ...) is overridden by name: git lists the
  keys it would read (`git config --list`, includes followed; reading runs nothing).
  Read-only calls also neutralize clean/smudge filters; write calls keep a filter only
  when it is defined outside the work tree (git-lfs in the person's config still cleans
  what it adds; a filter defined in a file the agent can write does not run);
- callers put `--end-of-options` before any value they pass and check values that came
  from a file (`is_sha`, `checked_sha`) before use.

Only the standard library: gitmeta runs this on every thread save.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from loom._timeouts import within
from loom.core.shapes import is_commit_id

NO_HOOKS = os.devnull  # `core.hooksPath`: nothing can be put there
TIMEOUT_S = 60.0

# Always applied, on every call.
_FIXED = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", NO_HOOKS),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
    ("core.askPass", ""),
    ("core.sshCommand", "false"),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
    ("color.ui", "never"),
)

# Keys (lower-cased) whose value is a program git may run, and their neutral value.
_PROGRAM_KEYS = [
    (re.compile(r"^pager\..+$"), "false"),
    (re.compile(r"^gpg\..+\.program$"), "false"),
    (re.compile(r"^diff\..+\.(?:command|textconv)$"), ""),
    (re.compile(r"^merge\..+\.driver$"), ""),
    (re.compile(r"^remote\..+\.(?:uploadpack|receivepack|vcs|proxy)$"), ""),
    (re.compile(r"^uploadpack\.packobjectshook$"), ""),
    (re.compile(r"^credential\..+\.helper$"), ""),
    (re.compile(r"^protocol\..+\.allow$"), "never"),
]
_FILTER_KEYS = [
    (re.compile(r"^filter\..+\.(?:clean|smudge|process)$"), ""),
    (re.compile(r"^filter\..+\.required$"), "false"),
]

SAFE_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_NO_LAZY_FETCH": "1",  # partial clones: never fetch missing objects (git >= 2.45)
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_ALLOW_PROTOCOL": "",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": "true",
}
READ_ONLY_ENV = {"GIT_OPTIONAL_LOCKS": "0"}  # a status never takes the index lock
# The only GIT_* variables kept from Loom's environment: who a commit is by, and when.
KEPT_ENV = frozenset(
    f"GIT_{who}_{what}" for who in ("AUTHOR", "COMMITTER") for what in ("NAME", "EMAIL", "DATE")
)


def is_sha(value: object) -> bool:
    """A (possibly abbreviated) commit id: 4 to 64 hex digits, nothing else."""
    return is_commit_id(value)


def checked_sha(value: object, what: str) -> str:
    """`value` when it is a commit id; ValueError naming `what` otherwise (a value read
    from a file never becomes an option or a revision expression)."""
    if not is_sha(value):
        raise ValueError(f"{what} is not a commit id: {str(value)[:60]!r}")
    return str(value)


def hardened_env(
    base: Mapping[str, str] | None = None,
    *,
    read_only: bool = True,
    repo_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """`base` (default: Loom's environment) without any `GIT_*`, plus the safe set and
    `repo_env` (the checkpoint store names its own GIT_DIR, work tree and index)."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if not k.startswith("GIT_") or k in KEPT_ENV}
    env.update(SAFE_ENV)
    if read_only:
        env.update(READ_ONLY_ENV)
    env.update(repo_env or {})
    return env


def env_changes(*, read_only: bool = True) -> dict[str, str | None]:
    """What `hardened_env` changes in Loom's environment (None: removed), for runners
    that build their own environment (the git tool's `run_process`)."""
    changes: dict[str, str | None] = {
        key: None for key in os.environ if key.startswith("GIT_") and key not in KEPT_ENV
    }
    changes.update(SAFE_ENV)
    if read_only:
        changes.update(READ_ONLY_ENV)
    return changes


@dataclass(frozen=True)
class ConfiguredKey:
    name: str
    origin: str  # "file:<path>" as `git config --show-origin` says, or ""


def overrides(
    keys: Sequence[ConfiguredKey] = (), *, read_only: bool = True, work_tree: str | None = None
) -> list[str]:
    """`-c key=value` pairs: the fixed ones, and one per configured key that names a
    program. On write calls a filter survives only when it is defined outside
    `work_tree` (so not in a file a sandboxed command could have written)."""
    pairs = list(_FIXED)
    seen = {name.lower() for name, _ in pairs}
    for key in keys:
        lowered = key.name.lower()
        if lowered in seen:
            continue
        value = _neutral(lowered)
        if value is None and (read_only or _writable_origin(key.origin, work_tree)):
            value = _neutral(lowered, _FILTER_KEYS)
        if value is not None:
            seen.add(lowered)
            pairs.append((key.name, value))
    args: list[str] = []
    for name, value in pairs:
        args += ["-c", f"{name}={value}"]
    return args


def _neutral(lowered: str, rules: list[tuple[re.Pattern[str], str]] = _PROGRAM_KEYS) -> str | None:
    for pattern, value in rules:
        if pattern.match(lowered):
            return value
    return None


def _writable_origin(origin: str, work_tree: str | None) -> bool:
    """A config file inside the work tree but outside its `.git`: the agent can write it."""
    if work_tree is None or not origin.startswith("file:"):
        return work_tree is None  # unknown where it came from: treat as writable
    root = os.path.realpath(work_tree)
    path = os.path.realpath(os.path.join(root, origin[len("file:") :]))
    inside = path == root or path.startswith(root + os.sep)
    return inside and not path.startswith(os.path.join(root, ".git") + os.sep)


_LIST_KEYS = ("config", "--list", "--show-origin", "--name-only", "-z")


def _parse_keys(out: bytes) -> list[ConfiguredKey]:
    parts = out.decode("utf-8", "replace").split("\0")
    pairs = zip(parts[0::2], parts[1::2], strict=False)
    return [ConfiguredKey(name, origin) for origin, name in pairs if name]


def configured_keys_now(cwd: str, env: Mapping[str, str]) -> list[ConfiguredKey]:
    """Every configuration key git would read in `cwd`, with where it comes from
    (includes followed; reading runs nothing). [] when it cannot be read."""
    try:
        out = subprocess.run(
            ["git", *_LIST_KEYS], cwd=cwd, env=dict(env), capture_output=True, timeout=10,
            stdin=subprocess.DEVNULL, check=False,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return []
    return _parse_keys(out)


async def configured_keys(cwd: str, env: Mapping[str, str]) -> list[ConfiguredKey]:
    """`configured_keys_now` for the event loop."""
    done = await _run_async(["git", *_LIST_KEYS], cwd, env, None, 10.0)
    return _parse_keys(done.stdout) if done is not None else []


def run_git(
    cwd: str | os.PathLike[str],
    *args: str,
    read_only: bool = True,
    input: bytes | None = None,
    timeout: float = TIMEOUT_S,
    repo_env: Mapping[str, str] | None = None,
    keys: Sequence[ConfiguredKey] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """`git ARGS` in `cwd`, hardened (see the module doc). `repo_env`: the repository
    is Loom's own (the checkpoint store: GIT_DIR and friends, no global config), so no
    configured keys are looked up; else they are, unless the caller passes `keys`
    it looked up once for several calls. OSError when git is missing;
    subprocess.TimeoutExpired after `timeout`. The exit code is the caller's to read."""
    where = os.fspath(cwd)
    env = hardened_env(read_only=read_only, repo_env=repo_env)
    if keys is None:
        keys = [] if repo_env else configured_keys_now(where, env)
    argv = ["git", *overrides(keys, read_only=read_only, work_tree=where), *args]
    return subprocess.run(
        argv, cwd=where, env=env, input=input, capture_output=True, timeout=timeout,
        stdin=None if input is not None else subprocess.DEVNULL, check=False,
    )  # fmt: skip


async def run_git_async(
    cwd: str | os.PathLike[str],
    *args: str,
    read_only: bool = True,
    timeout: float = TIMEOUT_S,
    keys: Sequence[ConfiguredKey] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """`run_git` for the event loop; a timeout kills git and raises TimeoutError."""
    where = os.fspath(cwd)
    env = hardened_env(read_only=read_only)
    if keys is None:
        keys = await configured_keys(where, env)
    argv = ["git", *overrides(keys, read_only=read_only, work_tree=where), *args]
    done = await _run_async(argv, where, env, timeout, timeout)
    if done is None:
        raise TimeoutError(f"git {args[0] if args else ''} took longer than {timeout:g} s")
    return done


async def _run_async(
    argv: list[str], cwd: str, env: Mapping[str, str], timeout: float | None, limit: float
) -> subprocess.CompletedProcess[bytes] | None:
    """Run to the end; None when it outlived `limit` seconds (then it is killed)."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=dict(env), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
    except OSError:
        if timeout is None:
            return None
        raise
    try:
        out, err = await within(process.communicate(), limit)
    except BaseException as exc:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)
        await process.wait()
        if isinstance(exc, TimeoutError):
            return None
        raise
    return subprocess.CompletedProcess(argv, process.returncode or 0, out, err)


# root -> (the stats of the config files read, the answer)
_hooks_seen: dict[str, tuple[tuple[tuple[int, int], ...], tuple[str, ...], str | None]] = {}


def hooks_folder(root: str) -> str | None:
    """The folder git takes hooks from in the repository around `root` when
    `core.hooksPath` names one (any config scope; absolute, a relative value taken from
    the top of the work tree as git does), else None (hooks in `.git/hooks`, no
    repository, no git). Reading config runs nothing. Cached while the repository's
    and the person's git config files are unchanged."""
    cached = _hooks_seen.get(root)
    if cached is not None and _stats(cached[1]) == cached[0]:
        return cached[2]
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-common-dir",
             "--git-path", "hooks"],
            cwd=root, env=hardened_env(), capture_output=True, timeout=10,
            stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.decode("utf-8", "replace").splitlines()
    if out.returncode != 0 or len(lines) != 2:
        return None
    common, hooks = lines
    found = None if os.path.normpath(hooks) == os.path.join(common, "hooks") else hooks
    files = (os.path.join(common, "config"), *_person_configs())
    _hooks_seen[root] = (_stats(files), files, found)
    return found


def _person_configs() -> tuple[str, ...]:
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return (os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config"))


def _stats(files: Sequence[str]) -> tuple[tuple[int, int], ...]:
    found: list[tuple[int, int]] = []
    for file in files:
        try:
            info = os.stat(file)
            found.append((info.st_mtime_ns, info.st_size))
        except OSError:
            found.append((0, 0))
    return tuple(found)
