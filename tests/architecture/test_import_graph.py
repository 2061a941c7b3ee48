"""The layering of docs/architecture.md, kept true: walks every import in src/loom
(module level, inside functions and under TYPE_CHECKING alike; a string naming one of our
modules, as `import_module("loom.x")` or an entry point "loom.x:provide" takes, counts
too) and fails on

- an import of a package from a higher layer (`core` imports nothing of ours);
- an import circle between packages, or between the modules of one package (its
  `__init__.py`, the front door every submodule passes through, aside);
- a face (`cli`, `web`, `mcp`, `acp`) reaching past `loom.session` into `store`,
  `permissions`, `tools`, `repointel`, `lsp`, ... (only `cli/server.py` drives
  `loom.server`); `server` importing anything but `core` and itself;
- a face importing a module inside `loom.session`, or a name `loom.session` does not
  export (its `__all__`): the package's front door is its `__init__.py`;
- a floor of `loom.session` importing a higher one (runtime < assembly < workspace <
  helpers);
- a package that is not in LAYERS (place a new package there when adding it);
- a module reaching into another package's private module (`loom.tools._paths` from
  `loom.lsp`): what other packages use is public (`loom.tools.builtin`).
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

# Lower numbers are lower layers; a package may import its own layer and the ones below.
LAYERS: dict[str, int] = {
    "loom": 0,  # loom/__init__.py: the version string only
    "core": 0,  # pure domain: ids, messages, thread model, state machine, events, errors
    "_xdg": 1,
    "_beneath": 1,  # openat-style confinement beneath the project root
    "_gitsafe": 1,  # git run so that repository config cannot execute programs
    "_entry_points": 1,  # installed entry points, one scan for every group
    "_lazy": 1,  # PEP 562 lazy exports of a package's names
    "startup_gc": 0,  # the collector paused while a session face starts
    "_timeouts": 0,  # time limits on awaits that never hide a cancellation
    "paths": 1,
    "config": 1,
    "config_keys": 1,  # every config key's kind: shapes, powerful, tighten-only
    "config_errors": 1,  # a bad value in a config file named: where, and what it takes
    "project_files": 1,  # a project's text files read confined to it (issue 19)
    "trust": 1,  # which projects the person trusts (issue 19)
    "ignore": 1,  # git's ignore rules, shared by tools and repointel
    "defaults": 0,  # plain constants config and the lower layers share
    "providers": 0,  # each built-in provider's declaration: names, variables, capabilities
    "gitmeta": 1,
    "gitdiff": 1,  # what changed since a commit (web Changes, REPL /diff)
    "worktrees": 1,  # git worktrees for parallel work, through the hardened git runner
    "llm": 2,
    "tools": 2,
    "permissions": 2,
    "prompts": 2,  # the system prompts, environment block, AGENTS.md files (issue 22)
    "store": 2,
    "sandbox": 2,  # how tools launch processes (issue 15)
    "hooks": 2,  # lifecycle hooks: run a command, read its decision (issue 23)
    "repointel": 3,
    "lsp": 3,
    "decisions": 3,  # decision graph (seed 000)
    "delegation": 3,  # agents, skills, the task and skill tools (issue 23)
    "checkpoints": 3,  # issue 13
    "mcp_client": 3,  # MCP servers' tools for the agent (issue 10)
    "session": 4,  # the Workspace: the one front door
    "cli": 5,
    "web": 5,
    "mcp": 5,  # `loom mcp serve`
    "acp": 5,
    "__main__": 5,
    "server": 0,  # the sync server: stands apart, see SERVER_MAY_IMPORT
}
FACES = {"cli", "web", "mcp", "acp", "__main__"}
FACES_MAY_IMPORT = {"loom", "core", "paths", "config", "session"}
FACE_EXCEPTIONS = {  # a command that starts another face (or the sync server)
    "loom.cli.server": {"server"},
    "loom.cli.mcp": {"mcp"},
    "loom.cli.acp": {"acp"},
    "loom.cli.web": {"web"},
    "loom.__main__": {"startup_gc"},  # pauses the collector before any face is imported
}
SERVER_MAY_IMPORT = {"loom", "core", "server"}
# The floors inside loom.session: each imports only its own and the ones before it.
SESSION_FLOORS = ("runtime", "assembly", "workspace", "helpers")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    return imports_of_file(path, module_name(path))


def imports_of_file(path: Path, name: str) -> set[str]:
    """Every `loom...` module `path` (the module `name`) imports, relative imports
    resolved; a string that names one of our modules (`import_module("loom.x.y")`, a
    lazy-export table, an entry point "loom.x.y:attr") counts as an import of it."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = named_module(node.value)
            if named is not None and named != name:
                found.add(named)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "loom")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] == "loom":
                found.add(target)
                # `from loom import session` imports the module loom.session
                found.update(f"{target}.{a.name}" for a in node.names if _is_module(target, a))
    return found


def named_module(text: str) -> str | None:
    """`loom.x.y` when `text` is "loom.x.y" or "loom.x.y:attr" and that module exists."""
    dotted = text.partition(":")[0]
    if not dotted.startswith("loom.") or not all(p.isidentifier() for p in dotted.split(".")):
        return None
    base = SRC.joinpath(*dotted.split("."))
    if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
        return dotted
    return None


def _is_module(package: str, alias: ast.alias) -> bool:
    base = SRC.joinpath(*package.split("."))
    return (base / alias.name).is_dir() or (base / f"{alias.name}.py").exists()


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "loom"


@functools.cache
def graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in sorted((SRC / "loom").rglob("*.py"))}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_package_has_a_layer() -> None:
    packages = {package_of(m) for m in graph()}
    missing = sorted(packages - LAYERS.keys())
    assert not missing, f"add {missing} to LAYERS in {Path(__file__).name} (see design.md)"


def test_no_package_imports_a_higher_layer() -> None:
    upward = []
    for module, targets in graph().items():
        here = package_of(module)
        if here == "server":
            continue  # checked on its own below
        for target in targets:
            there = package_of(target)
            if there != "server" and LAYERS.get(there, 0) > LAYERS.get(here, 0):
                upward.append(f"{module} -> {target}")
    assert not upward, "upward imports:\n" + "\n".join(sorted(upward))


def test_core_imports_nothing_of_ours() -> None:
    outside = [
        f"{module} -> {target}"
        for module, targets in graph().items()
        if package_of(module) == "core"
        for target in targets
        if package_of(target) not in {"core", "loom"} or target == "loom.__main__"
    ]
    assert not outside, "\n".join(outside)


def test_faces_go_through_the_workspace() -> None:
    reaching = []
    for module, targets in graph().items():
        if package_of(module) not in FACES:
            continue
        allowed = FACES_MAY_IMPORT | {package_of(module)} | FACE_EXCEPTIONS.get(module, set())
        if package_of(module) == "__main__":
            allowed = allowed | {"cli"}
        reaching += [f"{module} -> {t}" for t in targets if package_of(t) not in allowed]
    assert not reaching, "faces import only loom.session and loom.config:\n" + "\n".join(
        sorted(reaching)
    )


def test_the_sync_server_stands_apart() -> None:
    outside = [
        f"{module} -> {target}"
        for module, targets in graph().items()
        if package_of(module) == "server"
        for target in targets
        if package_of(target) not in SERVER_MAY_IMPORT
    ]
    assert not outside, "\n".join(outside)
    users = [
        f"{module} -> {target}"
        for module, targets in graph().items()
        if package_of(module) != "server" and module not in FACE_EXCEPTIONS
        for target in targets
        if package_of(target) == "server"
    ]
    assert not users, "only `loom server` (cli/server.py) drives the sync server:\n" + "\n".join(
        users
    )


def test_no_circles_between_packages() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for module, targets in graph().items():
        for target in targets:
            if package_of(target) != package_of(module):
                edges[package_of(module)].add(package_of(target))
    assert cycles(edges) == []


def package_init(module: str) -> bool:
    return (SRC.joinpath(*module.split(".")) / "__init__.py").is_file()


def test_no_circles_inside_a_package() -> None:
    """Two modules of one package that import each other (even lazily, even for types
    only) are one module in two files: move what both need into one of them, or give the
    lower one a Protocol for what it uses of the other."""
    loops = []
    for package in sorted({package_of(m) for m in graph()}):
        inside = {m for m in graph() if package_of(m) == package and not package_init(m)}
        edges = {m: {t for t in graph()[m] if t in inside and t != m} for m in inside}
        loops += [" <-> ".join(loop) for loop in cycles(edges)]
    assert not loops, "import circles inside a package:\n" + "\n".join(loops)


def session_exports() -> set[str]:
    """The names in loom.session's `__all__`, read from its source (not imported)."""
    tree = ast.parse((SRC / "loom" / "session" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    raise AssertionError("loom/session/__init__.py defines no __all__")


def names_imported_from(path: Path, module: str) -> set[str]:
    """The names `path` imports with `from <module> import ...`."""
    return {
        alias.name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module == module and not node.level
        for alias in node.names
    }


def test_faces_use_only_what_loom_session_exports() -> None:
    exported = session_exports()
    problems = []
    for path in sorted((SRC / "loom").rglob("*.py")):
        module = module_name(path)
        if package_of(module) not in FACES:
            continue
        problems += [
            f"{module} -> {target} (import it from loom.session; export it there if needed)"
            for target in imports_of(path)
            if target.startswith("loom.session.")
        ]
        problems += [
            f"{module} imports {name!r}, which loom.session does not export (add it to "
            "__all__ and _EXPORTS in loom/session/__init__.py)"
            for name in sorted(names_imported_from(path, "loom.session") - exported)
        ]
    assert not problems, "\n".join(problems)


def test_loom_session_exports_what_it_lists() -> None:
    """`__all__`, the lazy table and the typed imports name the same things."""
    import loom.session

    table = set(loom.session._EXPORTS)
    tree = ast.parse((SRC / "loom" / "session" / "__init__.py").read_text(encoding="utf-8"))
    typed = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module
        and node.module.startswith("loom.")
        and node.module != "loom._lazy"  # the mechanism, not an export
        for alias in node.names
    }
    assert table == session_exports() == typed
    for name in sorted(table):
        assert getattr(loom.session, name) is not None, name


def session_floor(module: str) -> str | None:
    """`runtime`, `assembly`, ... for a module inside a floor of loom.session, else None."""
    parts = module.split(".")
    if len(parts) > 2 and parts[:2] == ["loom", "session"] and parts[2] in SESSION_FLOORS:
        return parts[2]
    return None


def test_session_floors_point_down() -> None:
    upward = []
    for module, targets in graph().items():
        here = session_floor(module)
        if here is None:
            continue
        for target in targets:
            there = session_floor(target)
            if there is not None and SESSION_FLOORS.index(there) > SESSION_FLOORS.index(here):
                upward.append(f"{module} -> {target} ({here} is below {there})")
    assert not upward, "loom.session's floors import downward only:\n" + "\n".join(upward)
    stray = [m for m in graph() if m.startswith("loom.session.") and session_floor(m) is None]
    assert not stray, f"place these in one of loom/session/{SESSION_FLOORS}: {stray}"


def private_owner(module: str) -> str | None:
    """The package a private module (`loom.tools._paths`) belongs to (`loom.tools`); None
    for a public module, and for loom's own top-level ones (`loom._xdg`), which are floors."""
    parts = module.split(".")
    if len(parts) > 2 and parts[-1].startswith("_") and not parts[-1].startswith("__"):
        return ".".join(parts[:-1])
    return None


def private_reaches(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in edges.items():
        for target in targets:
            owner = private_owner(target)
            if owner is not None and module != owner and not module.startswith(owner + "."):
                found.append(f"{module} -> {target}")
    return sorted(found)


def test_private_modules_stay_in_their_package() -> None:
    reaching = private_reaches(graph())
    assert not reaching, (
        "a module whose name starts with `_` is its package's own; make what others use "
        "public (a module without the underscore):\n" + "\n".join(reaching)
    )
    # the rule itself: a sibling or a sub-package may; another package, even below, may not
    assert private_reaches(
        {
            "loom.tools.git": {"loom.tools._paths"},
            "loom.tools.sub.x": {"loom.tools._paths"},
            "loom.cli.app": {"loom._xdg", "loom.tools.builtin"},
            "loom.lsp.tools": {"loom.tools._paths"},
        }
    ) == ["loom.lsp.tools -> loom.tools._paths"]


def test_the_walker_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    """The checks are only as good as the walk: imports inside functions count."""
    assert "loom.session" in imports_of(SRC / "loom" / "cli" / "plugins.py")
    workspace = SRC / "loom" / "session" / "workspace" / "workspace.py"
    assert "loom.store.factory" in imports_of(workspace)
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    # a module named in a string is imported all the same (import_module, entry points)
    lazy = tmp_path / "lazy.py"
    lazy.write_text(
        'import importlib\nimportlib.import_module("loom.store.index")\n'
        'PROVIDERS = {"files": "loom.tools.defaults:provide", "not ours": "loom.nowhere"}\n'
    )
    assert {"loom.store.index", "loom.tools.defaults"} <= imports_of_file(lazy, "loom.cli.lazy")
    assert "loom.nowhere" not in imports_of_file(lazy, "loom.cli.lazy")


# -- one assembly path: only loom.session.workspace puts a session together -------------

ROOT = SRC.parent
ASSEMBLED = {  # what only the workspace package builds, by the module that defines it
    "Session": "loom.session.runtime.session",
    "SessionRegistry": "loom.session.workspace.registry",
}
ASSEMBLERS = "loom.session.workspace"  # Workspace.start_session, the one assembly path


def constructions(path: Path) -> list[str]:
    """`path:line Name(...)` for each call that builds a Session (or the registry of
    running sessions): the name imported from its module or from `loom.session`, or
    reached as an attribute of a `loom` module (`loom.session.Session(...)`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound: dict[str, str] = {}  # local name -> the class it is
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                defined = ASSEMBLED.get(alias.name)
                if defined and node.module in {defined, "loom.session"}:
                    bound[alias.asname or alias.name] = alias.name
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func, name = node.func, None
        if isinstance(func, ast.Name) and func.id in bound:
            name = bound[func.id]
        elif isinstance(func, ast.Attribute) and func.attr in ASSEMBLED:
            base = func.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id == "loom":
                name = func.attr
        if name is not None:
            where = path.relative_to(ROOT) if ROOT in path.parents else path
            found.append(f"{where}:{node.lineno} {name}(...)")
    return found


def python_files() -> list[Path]:
    """Our Python files; hidden folders skipped (bench/.work holds the Django sdist that
    bench/repomap_django.py downloads, which is not ours and not Python 3.11)."""
    folders = [SRC / "loom", ROOT / "tests", ROOT / "bench"]
    return sorted(
        p
        for folder in folders
        if folder.is_dir()
        for p in folder.rglob("*.py")
        if not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def test_only_the_workspace_assembles_a_session() -> None:
    """Faces, `loom run`, sub-agents, tests and benches start sessions with
    `Workspace.start_session(SessionSpec(...))`, so every session gets the sandbox, the
    policy, MCP, hooks and project instructions: nothing else builds a Session."""
    inside = SRC / "loom" / "session" / "workspace"
    outside = [
        where
        for path in python_files()
        if inside not in path.parents
        for where in constructions(path)
    ]
    assert not outside, (
        "start sessions with Workspace.start_session (tests: make_workspace in "
        "tests/support/sessions.py), never by building one:\n" + "\n".join(outside)
    )
    assembled = [w for p in sorted(inside.glob("*.py")) for w in constructions(p)]
    assert any("Session(...)" in w for w in assembled)  # the walker sees the one path


def test_the_assembly_check_sees_every_spelling(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import loom.session\n"
        "from loom.session import Session as S\n"
        "from loom.session.workspace.registry import SessionRegistry\n"
        "from loom.core.thread import Session\n"  # not ours to check: another Session
        "S(thread=None)\nSessionRegistry()\nloom.session.Session()\nSession()\n"
    )
    found = constructions(sample)
    assert [f.split(" ")[1] for f in found] == ["Session(...)", "SessionRegistry(...)",
                                                "Session(...)"]  # fmt: skip
