"""One exception root: every exception class under `src/loom` derives from LoomError,
or is listed below as one that stays inside its package (with where it is caught); and
`core/errors.py`'s docstring draws every LoomError subclass under its parent."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import loom
from loom.core import errors
from loom.core.errors import LoomError

# module -> class names that never reach a face: each is caught (and, where a person
# must read it, turned into a LoomError, an error result or an event) inside its package.
STAYS_INSIDE: dict[str, set[str]] = {
    # an OSError by design (errno, message, file): project_files turns it into
    # OutsideProject, the file tools into a ToolError, repointel skips the file
    "loom._beneath": {"Escape"},
    "loom.gitdiff": {"_GitFailed"},  # private to the module
    # the model's own mistakes, answered to the model: architect.py, messages.py, todo tool
    "loom.core.plan": {"PlanError"},
    "loom.core.text": {"TooDeep"},
    "loom.core.todos": {"TodoError"},
    # a tool's failure: the tool runner makes it an error result for the model
    "loom.tools.base": {"ToolError"},
    "loom.decisions.recorder": {"DecisionInputError"},
    "loom.tools._netguard": {"Refused"},  # web_fetch answers it as its result
    # agents and skills files: the delegation package reports them as problems
    "loom.delegation._files": {"NotReadable"},
    "loom.delegation.frontmatter": {"FrontmatterError"},
    # a model call: the session turns it into SetupError, an error event or a TurnError
    "loom.llm.base": {"LlmError"},
    "loom.llm.guard": {"ModelRequestBlocked"},
    "loom.llm.registry": {"ModelConfigError"},
    "loom.session.runtime.stall_watch": {"StalledStream"},
    # language servers: the lsp tools answer them as results
    "loom.lsp.client": {"LspError", "LspServerDied", "LspTimeout"},
    "loom.lsp.jsonrpc": {"ProtocolError"},
    "loom.lsp.launch": {"LaunchError"},
    "loom.lsp.supervisor": {"NoServerError"},
    "loom.mcp_client.connection": {"McpConnectError"},  # the hub reports the server
    "loom.repointel.scan": {"_DirectoriesMoved", "_GitignoresMoved"},  # private
    "loom.repointel.tags": {"BinaryFile"},  # private to the module
    "loom.session.runtime.auto_commit": {"AutoCommitError"},  # private: a notice
    # the store's own: ThreadsApi (person_errors), SyncApi and the syncing store turn
    # them into LoomErrors or sync_error events
    "loom.store.atomic": {"StorageError"},
    "loom.store.credentials": {"CredentialsError"},
    "loom.store.private_record": {"PrivateRecordUnreadable"},
    "loom.store.summary": {"BadThreadFile"},
    "loom.store.sync_client": {
        "SyncClientError",
        "SyncUnavailable",
        "SyncAuthError",
        "SyncRejected",
        "SyncConflict",
    },
    # the sync server's routes answer these with an HTTP status
    "loom.server.limits": {"BodyTooLarge"},
    "loom.server.rows": {"BadThread"},
    "loom.server.threads": {"RecordNotFound", "Forbidden", "BadCursor", "Conflict"},
}

# Alembic's scripts run only inside `alembic` (they read its context when imported).
NOT_IMPORTED = ("loom.server.migrations",)


def _exception_classes() -> dict[type[BaseException], str]:
    found: dict[type[BaseException], str] = {}
    for info in pkgutil.walk_packages(loom.__path__, "loom."):
        if info.name.startswith(NOT_IMPORTED):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
            ):
                found[value] = info.name
    return found


@pytest.fixture(scope="module")
def classes() -> dict[type[BaseException], str]:
    return _exception_classes()


def test_every_exception_is_a_loom_error_or_stays_inside(
    classes: dict[type[BaseException], str],
) -> None:
    outside = sorted(
        f"{module}.{cls.__qualname__}"
        for cls, module in classes.items()
        if not issubclass(cls, LoomError) and cls.__qualname__ not in STAYS_INSIDE.get(module, ())
    )
    assert outside == [], "derive these from LoomError, or list them in STAYS_INSIDE"


def test_the_list_names_no_class_that_is_gone_or_a_loom_error(
    classes: dict[type[BaseException], str],
) -> None:
    listed = {(module, name) for module, names in STAYS_INSIDE.items() for name in names}
    private = {
        (module, cls.__qualname__)
        for cls, module in classes.items()
        if not issubclass(cls, LoomError)
    }
    assert listed - private == set()


def test_faces_get_loom_errors_from_the_session_api() -> None:
    import loom.session

    exported = [getattr(loom.session, name) for name in loom.session.__all__]
    exceptions = [e for e in exported if inspect.isclass(e) and issubclass(e, BaseException)]
    assert len(exceptions) >= 10
    assert [e.__name__ for e in exceptions if not issubclass(e, LoomError)] == []


def _drawn_tree() -> dict[str, str | None]:
    """Class name -> the name it is drawn under, from the docstring's indented tree."""
    assert errors.__doc__ is not None
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in errors.__doc__.splitlines():
        match = re.fullmatch(r"(\s+)([A-Z]\w*)( \[\w+\])?(\s+[\w/.]+\.py)?", line)
        if match is None:
            continue
        indent, name = len(match.group(1)), match.group(2)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parents[name] = stack[-1][1] if stack else None
        stack.append((indent, name))
    return parents


def test_the_docstring_draws_every_loom_error_under_its_parent(
    classes: dict[type[BaseException], str],
) -> None:
    drawn = _drawn_tree()
    assert drawn["LoomError"] is None
    real: dict[str, str | None] = {}
    for cls in classes:
        if issubclass(cls, LoomError):
            parent = next((b for b in cls.__bases__ if issubclass(b, LoomError)), None)
            real[cls.__name__] = parent.__name__ if parent is not None else None
    assert drawn == real


def test_a_loom_error_keeps_its_builtin_and_its_message() -> None:
    from loom.session import NoPendingPermission, OutsideProject, TurnError

    outside = OutsideProject("a.md leads outside the project; not read")
    assert isinstance(outside, OSError) and str(outside) == outside.what
    assert outside.errno is None
    turn = TurnError("the model failed", origin="Session")
    assert isinstance(turn, RuntimeError) and (str(turn), turn.origin) == (
        "the model failed",
        "Session",
    )
    assert isinstance(NoPendingPermission("none waiting"), LookupError)
