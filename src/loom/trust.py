"""Whether the person trusts a project's powerful settings (design principle 8).

A project's files may set keys that choose a program, an endpoint, an environment or
loosen a permission (`loom.config_keys.KEYS` says which), its `.mcp.json` names MCP
servers to start, and an interpreter it holds (`.venv/bin/python`) is one a language
server would run. Those take effect only once the person trusts the project. The
decision is remembered per project root together with a fingerprint of exactly those
items, so a `git pull` or a planted file that changes them makes the project untrusted
again, and the next question shows the difference.

The decisions live in `$XDG_DATA_HOME/loom/trust.json` (`LoomPaths.trust_file`), in
Loom's data folder, which sandboxed commands cannot write. A missing file means nothing
is trusted; a corrupt one is moved to the quarantine folder and an unreadable one is
left alone: either way every project is untrusted and the problem is said once.

    trust = evaluate(root, items, store)   # state: none, trusted, untrusted, changed, ...
    if trust.needs_question: show trust.question_lines(), then trust.trust() / .decline()
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from loom.config_keys import MCP_JSON_KIND, Held, Show, show_value, visible
from loom.project_files import OutsideProject, read_project_text, what_program_runs

MCP_JSON_NAME = ".mcp.json"
STORE_VERSION = 1
State = Literal["none", "trusted", "flag", "untrusted", "changed", "declined"]


@dataclass(frozen=True)
class TrustItem:
    """One powerful setting a project file makes: where, which key, what value."""

    source: str  # the file, relative to the project root: ".loom.toml", ".mcp.json"
    key: str  # "lsp.servers.python", "providers.openai.base_url", "mcpServers.fs"
    value: Any
    show: Show = show_value

    @property
    def label(self) -> str:
        return visible(f"{self.key} ({self.source})")  # a TOML key may hold anything

    @property
    def digest(self) -> str:
        payload = json.dumps([self.source, self.key, self.value], sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()

    def lines(self) -> list[str]:
        """What it would do, spelled out, secrets masked, nothing a terminal would act on
        (a value cannot hide itself with an escape sequence or a carriage return)."""
        return [visible(line) for line in self.show(self.key, self.value)]


def items_from_held(held: Iterable[Held], source: str) -> list[TrustItem]:
    return [TrustItem(source, h.key, h.value, h.kind.show) for h in held]


def mcp_json_items(root: Path) -> tuple[list[TrustItem], str | None]:
    """The servers of `<root>/.mcp.json` as trust items (a broken file is one item
    standing for its bytes), and a problem line when it leads outside the project."""
    try:
        text = read_project_text(root, MCP_JSON_NAME)
    except OutsideProject as exc:
        return [], str(exc)
    if text is None:
        return [], None
    try:
        data = json.loads(text)
        servers = data.get("mcpServers") if isinstance(data, dict) else None
    except ValueError:
        servers = None
    if not isinstance(servers, dict):
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        return [TrustItem(MCP_JSON_NAME, "(unreadable file)", digest)], None
    show = MCP_JSON_KIND.show
    return [TrustItem(MCP_JSON_NAME, f"mcpServers.{n}", e, show) for n, e in servers.items()], None


# Interpreters a language server finds in a project by itself and runs: basedpyright runs
# `.venv/bin/python` (to learn the search paths); other servers and editors look in
# `venv/` too. They are the project's programs, so they are trust items like a command.
PROJECT_INTERPRETERS = (".venv/bin/python", "venv/bin/python")
INTERPRETER_KEY = "python interpreter"


def interpreter_items(root: Path) -> list[TrustItem]:
    """The interpreters in `root` a language server would run, as trust items whose value
    says what runs (where the link leads; a program kept in the project by its hash), so
    one replaced after the person trusted the project is not trusted."""
    return [
        TrustItem(rel, INTERPRETER_KEY, what_program_runs(Path(root), rel), _show_interpreter)
        for rel in PROJECT_INTERPRETERS
        if os.path.lexists(Path(root) / rel)
    ]


def _show_interpreter(key: str, value: Any) -> list[str]:
    return [
        f"{key}: {value}",
        "a language server (lsp_diagnostics, ...) would run it, sandboxed, to find the "
        "project's packages; until you trust the project it does not run (the system "
        "Python is used instead)",
    ]


def fingerprint(items: Iterable[TrustItem]) -> str:
    digests = sorted(item.digest for item in items)
    return hashlib.sha256("\n".join(digests).encode()).hexdigest()


# -- the store ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TrustRecord:
    decision: Literal["trusted", "declined"]
    fingerprint: str
    decided_at: str
    items: list[dict[str, Any]]  # source, key, digest, lines (masked): for the difference


class TrustStore:
    """The trust decisions (`trust.json`). Reading never raises: a problem leaves every
    project untrusted and is kept in `problem` for the face to say once."""

    def __init__(self, file: Path, quarantine_dir: Path | None = None) -> None:
        self.file = Path(file)
        self.quarantine_dir = quarantine_dir
        self.problem: str | None = None

    def record(self, root: Path) -> TrustRecord | None:
        entry = self._read().get(_key(root))
        if not isinstance(entry, dict):
            return None
        try:
            return TrustRecord(
                decision="declined" if entry["decision"] == "declined" else "trusted",
                fingerprint=str(entry["fingerprint"]),
                decided_at=str(entry.get("decided_at", "")),
                items=[i for i in entry.get("items", []) if isinstance(i, dict)],
            )
        except (KeyError, TypeError):
            return None

    def decide(
        self, root: Path, decision: Literal["trusted", "declined"], items: list[TrustItem]
    ) -> None:
        """Remember the decision for `root` as its items are now. OSError when the file
        cannot be written (the caller says so)."""
        record = {
            "decision": decision,
            "fingerprint": fingerprint(items),
            "decided_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "items": [
                {"source": i.source, "key": i.key, "digest": i.digest, "lines": i.lines()}
                for i in items
            ],
        }
        with self._locked():
            projects = self._read()
            projects[_key(root)] = record
            self._write(projects)

    def forget(self, root: Path) -> bool:
        with self._locked():
            projects = self._read()
            found = projects.pop(_key(root), None) is not None
            if found:
                self._write(projects)
        return found

    def projects(self) -> dict[str, Any]:
        return dict(self._read())

    # -- the file --------------------------------------------------------------------------

    def _read(self) -> dict[str, Any]:
        try:
            raw = self.file.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            self.problem = (
                f"cannot read the trust store {self.file} ({exc.strerror or exc}); every "
                "project is untrusted until it is readable again"
            )
            return {}
        try:
            data = json.loads(raw)
            projects = data["projects"]
            if not isinstance(projects, dict):
                raise TypeError("projects is not an object")
        except (ValueError, KeyError, TypeError) as exc:
            self._quarantine(f"{type(exc).__name__}: {exc}")
            return {}
        return projects

    def _quarantine(self, why: str) -> None:
        moved = ""
        if self.quarantine_dir is not None:
            target = self.quarantine_dir / f"trust.json.{int(time.time())}.corrupt"
            with contextlib.suppress(OSError):
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(self.file, target)
                moved = f", moved to {target}"
        self.problem = (
            f"the trust store {self.file} was corrupt ({why}){moved}; every project is "
            "untrusted until you trust it again (`loom trust`)"
        )

    def _write(self, projects: dict[str, Any]) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        temp = self.file.with_name(f".{self.file.name}.{os.getpid()}.tmp")
        data = json.dumps({"version": STORE_VERSION, "projects": projects}, indent=2)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, data.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, self.file)
        with contextlib.suppress(OSError):
            dir_fd = os.open(self.file.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

    @contextlib.contextmanager
    def _locked(self) -> Any:
        """One writer at a time (two faces trusting at once must not lose a decision)."""
        import fcntl

        self.file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.file.with_name("trust.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _key(root: Path) -> str:
    return str(Path(root).resolve())


# -- a project's trust, as a face sees it --------------------------------------------------


@dataclass
class ProjectTrust:
    """The powerful settings of one project and whether they apply.

    state: none (the project sets nothing powerful), trusted (as recorded), flag
    (trusted for this run: `--trust`), untrusted (never decided), changed (decided for
    other settings than these: asked again), declined (the person said no to these)."""

    root: Path
    items: list[TrustItem]
    state: State
    store: TrustStore | None = None
    record: TrustRecord | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def applies(self) -> bool:
        return self.state in ("none", "trusted", "flag")

    @property
    def needs_question(self) -> bool:
        return self.state in ("untrusted", "changed")

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.items)

    def allows_interpreter(self) -> bool:
        """Whether a language server may run the project's own Python (in the sandbox):
        the project is trusted and the interpreters it holds now are the ones trusted
        (one a command planted or replaced since is not)."""
        if self.state not in ("trusted", "flag"):
            return False
        found = {item.digest for item in interpreter_items(self.root)}
        trusted = {item.digest for item in self.items if item.key == INTERPRETER_KEY}
        return bool(found) and found <= trusted

    def ignored(self) -> list[TrustItem]:
        return [] if self.applies else list(self.items)

    def notice(self, how: str = "review and trust them with `loom trust`") -> str | None:
        """One line naming each ignored setting once, and how to trust; None when
        nothing is ignored."""
        ignored = self.ignored()
        if not ignored:
            return None
        why = "you chose not to trust it" if self.state == "declined" else "not trusted"
        if self.state == "changed":
            why = "its trusted settings changed"
        names = ", ".join(item.label for item in ignored)
        return visible(f"project {self.root} ({why}): ignored {names}; {how}")

    def question_lines(self) -> list[str]:
        """What trusting would enable, each item spelled out, and what changed since
        the last decision."""
        lines = [f"The project {self.root} sets what only a trusted project may:"]
        for group in self._item_groups():
            lines.extend(f"  {line}" for line in group)
        lines.extend(self.difference())
        return [visible(line) for line in lines]  # a folder name may hold anything too

    def question_groups(self) -> list[list[str]]:
        """The same question as groups of lines, one per item (its first line names it:
        a hook with all its commands is one), then what changed since the last decision."""
        groups = self._item_groups()
        difference = self.difference()
        if difference:
            groups.append(difference)
        return [[visible(line) for line in group] for group in groups]

    def _item_groups(self) -> list[list[str]]:
        groups = []
        for item in self.items:
            shown = item.lines()
            groups.append([f"{shown[0]}   [{item.source}]", *shown[1:]])
        return groups

    def difference(self) -> list[str]:
        """Added, changed and removed items since the recorded decision."""
        if self.record is None or self.record.fingerprint == self.fingerprint:
            return []
        before = {(i.get("source"), i.get("key")): i for i in self.record.items}
        now = {(i.source, i.key): i for i in self.items}
        lines = [
            f"Since you {'trusted' if self.record.decision == 'trusted' else 'declined'} "
            f"it ({self.record.decided_at or 'earlier'}):"
        ]
        for where, item in now.items():
            old = before.get(where)
            if old is None:
                lines.append(f"  + {item.label} (new)")
            elif old.get("digest") != item.digest:
                lines.append(f"  ~ {item.label} changed; it was:")
                lines.extend(f"      {line}" for line in old.get("lines", []))
        for where, old in before.items():
            if where not in now:
                lines.append(f"  - {old.get('key')} ({old.get('source')}) removed")
        return lines

    def trust(self) -> None:
        """Trust these settings (remembered). OSError when the store cannot be written."""
        self._decide("trusted")
        self.state = "trusted" if self.items else "none"

    def decline(self) -> None:
        """Do not trust these settings, and do not ask again until they change."""
        self._decide("declined")
        self.state = "declined" if self.items else "none"

    def revoke(self) -> bool:
        if self.store is None:
            return False
        found = self.store.forget(self.root)
        if self.items:
            self.state = "untrusted"
        self.record = None
        return found

    def _decide(self, decision: Literal["trusted", "declined"]) -> None:
        if self.store is None:
            raise OSError("no trust store to remember the decision in")
        self.store.decide(self.root, decision, self.items)
        self.record = self.store.record(self.root)


# trust store problems already handed to a face in this process (see `evaluate`)
_SAID: set[str] = set()


def evaluate(
    root: Path, items: list[TrustItem], store: TrustStore, *, forced: bool | None = None
) -> ProjectTrust:
    """The trust state of `root` with these powerful items. `forced`: True trusts them
    for this run (`--trust`), False never; None asks the store."""
    root = Path(root).resolve()
    trust = ProjectTrust(root, items, "none", store)
    if not items:
        return trust  # nothing to decide: the store is not even read
    record = store.record(root)
    trust.record = record
    if store.problem and store.problem not in _SAID:  # said once per process: a face
        _SAID.add(store.problem)  # may read the configuration more than once
        trust.problems.append(store.problem)
    if forced is True:
        trust.state = "flag"
    elif forced is False or record is None:
        trust.state = "untrusted"
    elif record.fingerprint != fingerprint(items):
        trust.state = "changed"
    else:
        trust.state = "trusted" if record.decision == "trusted" else "declined"
    return trust
